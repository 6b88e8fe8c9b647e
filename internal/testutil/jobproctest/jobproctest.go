// Package jobproctest lets a test binary be the runner's job process too:
// code under test that runs jobs (runner.LocalJob, a runner) re-executes
// os.Args[0] as "job --dir DIR", as outpost-runner re-executes itself.
package jobproctest

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/outpost-dev/outpost/runner"
)

// Main is a TestMain's body: the job process when the binary is run as
// one (with the runner's built-in plugins), else the tests. It returns the
// exit code.
func Main(m *testing.M) int {
	if len(os.Args) != 4 || os.Args[1] != "job" || os.Args[2] != "--dir" {
		return m.Run()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runner.RunJobProcess(ctx, os.Args[3], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
