//go:build !linux

package main

import (
	"context"
	"fmt"
	"io"
)

// up and down find the daemon in /proc.

func runUp(_ context.Context, _ []string, _ func(string) string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "outpost-registry up: needs Linux; run outpost-registry serve in the background instead")
	return 1
}

func runDown(_ context.Context, _ []string, _ func(string) string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "outpost-registry down: needs Linux; signal the pid of serve's -pid-file instead")
	return 1
}
