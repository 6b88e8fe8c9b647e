package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/outpost-dev/outpost/protocol"
)

// LocalJob is a job run with no gateway (an offline deploy): as the runner
// runs each job — its own directory holding job.json, and the job binary's
// "job --dir" process, a process group of its own with a clean environment —
// but with its output given to Log and no lease, heartbeat or log shipping.
type LocalJob struct {
	// Exe is the job binary: outpost-runner, or outpost-runner-helm for
	// HelmJobTypes.
	Exe string
	// Dir is the job's directory (created).
	Dir string
	Job protocol.Job
	// Env is added to the job's clean environment (PATH, HOME, TMPDIR,
	// LANG, OUTPOST_JOB_ID).
	Env []string
	// Log takes each line of the job's output (stream: protocol.StreamStdout
	// or protocol.StreamStderr).
	Log func(stream, line string)
}

// Run runs the job to its end and returns its result. ctx ending stops
// the job (SIGTERM to its process group).
func (j LocalJob) Run(ctx context.Context) (Result, error) {
	if err := os.MkdirAll(filepath.Join(j.Dir, tmpDir), 0o700); err != nil {
		return Result{}, err
	}
	if err := writeJSONFile(filepath.Join(j.Dir, jobFile), j.Job); err != nil {
		return Result{}, fmt.Errorf("writing the job: %w", err)
	}
	s := &supervisor{dir: j.Dir, job: j.Job, extraEnv: j.Env}
	p, err := startJobProcess(j.Exe, j.Dir, s.env(), nil, localSink(j.Log), false, func(start func() error) error { return start() })
	if err != nil {
		return Result{}, err
	}
	select {
	case <-p.exited:
	case <-ctx.Done():
		p.signal(syscall.SIGTERM)
		<-p.exited
	}
	p.finish()
	res, err := ReadResult(j.Dir)
	if err != nil {
		return Result{}, fmt.Errorf("the job process left no result (%s): %w", p.cmd.ProcessState, err)
	}
	return res, nil
}

// localSink gives a job's lines to a function.
type localSink func(stream, line string)

func (f localSink) Append(stream, data string) (int64, error) {
	f(stream, data)
	return 0, nil
}
