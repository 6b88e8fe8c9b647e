// Command podapp is the program of the node test's images (node_test.go):
// it prints -line every second, serves /readyz (ready unless -ready=false)
// and /line (-line) on :8080 and, when DIAL names an address, sends it one
// line.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	line := flag.String("line", "podapp", "the line to print every second")
	ready := flag.Bool("ready", true, "whether /readyz says ready")
	flag.Parse()
	if addr := os.Getenv("DIAL"); addr != "" {
		go dial(addr, *line)
	}
	http.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !*ready {
			http.Error(w, "never ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	http.HandleFunc("/line", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, *line) })
	go func() {
		for {
			fmt.Println(*line)
			time.Sleep(time.Second)
		}
	}()
	if err := http.ListenAndServe(":8080", nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// dial sends "hello from <line>" to addr, retrying until it gets through.
func dial(addr, line string) {
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			fmt.Fprintf(c, "hello from %s\n", line)
			c.Close()
			return
		}
		fmt.Fprintln(os.Stderr, err)
		time.Sleep(time.Second)
	}
}
