// Command chatty prints its arguments as lines, every second, until stopped: a container whose
// log the support tests read on a real node.
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	for {
		for _, line := range os.Args[1:] {
			fmt.Println(line)
		}
		time.Sleep(time.Second)
	}
}
