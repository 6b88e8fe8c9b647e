// Command tool is the one program of the test base image (FROM scratch):
// "tool write FILE" writes $GREETING to FILE; "tool fail" fails.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "write" {
		err := os.MkdirAll(filepath.Dir(os.Args[2]), 0o755)
		if err == nil {
			err = os.WriteFile(os.Args[2], []byte(os.Getenv("GREETING")+"\n"), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "tool:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Fprintln(os.Stderr, "tool: asked to fail")
	os.Exit(3)
}
