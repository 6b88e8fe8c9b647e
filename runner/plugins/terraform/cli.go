package terraform

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"time"
)

// cli runs terraform commands without terraform-exec, in the module's
// directory with terraform's environment.
type cli struct {
	bin, dir string
	env      []string
}

func newCLI(bin, dir string, env map[string]string) cli {
	c := cli{bin: bin, dir: dir}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		c.env = append(c.env, k+"="+env[k])
	}
	// As terraform-exec runs terraform: not interactive, no log output
	// mixed into what the job shows.
	c.env = append(c.env, "TF_IN_AUTOMATION=1", "TF_INPUT=0", "TF_LOG=", "TF_LOG_CORE=", "TF_LOG_PATH=", "TF_LOG_PROVIDER=")
	return c
}

// run runs terraform with args. Its error reads like terraform-exec's,
// "<how it ended>\n<what it wrote to stderr>", for failure(). When ctx ends
// terraform is interrupted, as terraform-exec does, so it stops gracefully.
func (c cli) run(ctx context.Context, stdout, stderr io.Writer, args ...string) error {
	p, err := c.start(ctx, stdout, stderr, args...)
	if err != nil {
		return err
	}
	return p.wait()
}

// process is a terraform process that cli.start started.
type process struct {
	cmd  *exec.Cmd
	errs bytes.Buffer  // what it wrote to stderr
	done chan struct{} // closed once it ended and its output is copied
	err  error         // how it ended, once done is closed
}

// start starts terraform with args, as run does, without waiting for it.
func (c cli) start(ctx context.Context, stdout, stderr io.Writer, args ...string) (*process, error) {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	p := &process{cmd: cmd, done: make(chan struct{})}
	cmd.Dir, cmd.Env, cmd.Stdout = c.dir, c.env, stdout
	cmd.Stderr = &p.errs
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, &p.errs)
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = interruptGrace
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// wait waits for the process to end; its error is run's.
func (p *process) wait() error {
	<-p.done
	if p.err != nil {
		return fmt.Errorf("%w\n%s", p.err, p.errs.String())
	}
	return nil
}

// kill ends the process at once and waits for it.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// interruptGrace is how long terraform has to stop after an interrupt.
const interruptGrace = 30 * time.Second
