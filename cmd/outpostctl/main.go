// Command outpostctl is the vendor's CLI: it drives an Outpost org through
// the public control API (/v1) alone, with the client package apiclient
// generates from the API's OpenAPI document. Contexts (API URL and token
// file) are kept by package cliconfig. It links none of the control plane
// (a test checks): see docs/architecture/cli.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and is the process's exit code; every error
// is one line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	root, c := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	if e, ok := errors.AsType[*apiError](err); ok {
		err = explain(e, c.used)
	}
	fmt.Fprintln(stderr, "outpostctl:", err)
	return exitCode(err)
}
