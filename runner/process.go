package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// outputDrainTimeout bounds how long the supervisor reads a job's output
// after the job's process group is gone (a process that left the group may
// still hold the pipes).
const outputDrainTimeout = 5 * time.Second

// jobProcess is a running "outpost-runner job" process, leader of a process
// group of its own, whose stdout and stderr go to the spool line by line.
type jobProcess struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
	pipes  []*os.File    // read ends of stdout and stderr
	output sync.WaitGroup
	stdin  *os.File // write end of stdin, for a job whose inputs are deferred
}

// lineSink takes a job's output, line by line: the spool, or an offline
// deploy's log (LocalJob).
type lineSink interface {
	Append(stream, data string) (int64, error)
}

// startJobProcess starts the job process, through start (which calls the
// function it is given: priorities.startLowered, or directly). With
// deferredInputs its standard input is a pipe that giveInputs writes the
// inputs to; otherwise it is /dev/null. cred, when set, is the uid the
// job runs as.
func startJobProcess(exe, dir string, env []string, cred *syscall.Credential, spool lineSink, deferredInputs bool, start func(func() error) error) (*jobProcess, error) {
	p := &jobProcess{exited: make(chan struct{})}
	p.cmd = exec.Command(exe, "job", "--dir", dir)
	p.cmd.Dir = dir
	p.cmd.Env = env
	p.cmd.SysProcAttr = jobSysProcAttr()
	p.cmd.SysProcAttr.Credential = cred

	streams := []string{protocol.StreamStdout, protocol.StreamStderr}
	var writers []*os.File
	closeAll := func(files []*os.File) {
		for _, f := range files {
			f.Close()
		}
	}
	for range streams {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(p.pipes)
			closeAll(writers)
			return nil, fmt.Errorf("creating output pipes: %w", err)
		}
		p.pipes, writers = append(p.pipes, r), append(writers, w)
	}
	p.cmd.Stdout, p.cmd.Stderr = writers[0], writers[1]
	var stdinRead *os.File
	if deferredInputs {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(p.pipes)
			closeAll(writers)
			return nil, fmt.Errorf("creating the input pipe: %w", err)
		}
		p.cmd.Stdin, stdinRead, p.stdin = r, r, w
	}
	err := start(p.cmd.Start)
	closeAll(writers) // the child has its copies
	if stdinRead != nil {
		stdinRead.Close()
	}
	if err != nil {
		closeAll(p.pipes)
		if p.stdin != nil {
			p.stdin.Close()
		}
		return nil, fmt.Errorf("starting the job process: %w", err)
	}

	for i, stream := range streams {
		p.output.Add(1)
		go func() {
			defer p.output.Done()
			defer p.pipes[i].Close()
			_ = readLines(p.pipes[i], protocol.MaxLogChunkBytes, func(line string) {
				_, _ = spool.Append(stream, line) // a failed write is reported by spool.Err
			})
		}()
	}
	go func() {
		_ = p.cmd.Wait() // how it ended is in cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

// giveInputs writes a deferred job's inputs, one line of JSON, to the job
// process's standard input, and closes it.
func (p *jobProcess) giveInputs(inputs json.RawMessage) error {
	if p.stdin == nil {
		return errors.New("the job process has no input pipe")
	}
	defer p.stdin.Close()
	var line bytes.Buffer
	if err := json.Compact(&line, inputs); err != nil {
		return fmt.Errorf("the inputs are not valid JSON: %w", err)
	}
	line.WriteByte('\n')
	_, err := p.stdin.Write(line.Bytes())
	return err
}

// signal sends sig to the job's whole process group.
func (p *jobProcess) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}

// finish, once the job process has exited, kills what is left of its process
// group (a background process it left behind) and waits until the job's
// output has all been read.
func (p *jobProcess) finish() {
	p.signal(syscall.SIGKILL)
	if p.stdin != nil {
		p.stdin.Close() // inputs never given; closing twice is harmless
	}
	done := make(chan struct{})
	go func() {
		p.output.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(outputDrainTimeout):
		for _, r := range p.pipes {
			r.Close()
		}
		<-done
	}
}
