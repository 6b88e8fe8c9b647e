package runner

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMain lets the test binary be the job process too: the supervisor under
// test re-executes it (os.Executable) as "job --dir DIR", as the runner binary
// re-executes itself. As "spawn-job DIR" it stands in for a runner that starts
// a job process as the supervisor does, and can then be killed.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "spawn-job" {
		dir := os.Args[2]
		spool, err := createSpool(filepath.Join(dir, spoolFile))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		p, err := startJobProcess(os.Args[0], dir, []string{"PATH=" + os.Getenv("PATH")}, nil, spool, false, func(f func() error) error { return f() })
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		<-p.exited
		os.Exit(0)
	}
	if len(os.Args) == 4 && os.Args[1] == "job" && os.Args[2] == "--dir" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := RunJobProcessWith(ctx, os.Args[3], testPlugins(), os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
