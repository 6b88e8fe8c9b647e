package localcluster

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// process is one of the node's child processes.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *tail
	done chan struct{} // closed when it has exited
	err  error         // its exit, once done
}

// start starts a child process of the node; what it writes goes to its tail
// and the cluster's Output.
func (n *Node) start(name, path string, args ...string) error {
	p := &process{name: name, out: &tail{}, done: make(chan struct{})}
	p.cmd = exec.Command(path, args...)
	p.cmd.Dir = n.dir
	p.cmd.Stdout = output(p.out, n.out)
	p.cmd.Stderr = p.cmd.Stdout
	// A process group of its own: a ^C to the test reaches the test only,
	// which then stops the node in order.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	n.procs = append(n.procs, p)
	return nil
}

// exited is an error when a process of the node has exited, quoting it.
func (n *Node) exited() error {
	for _, p := range n.procs {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited: %v%s", p.name, p.err, p.out.quote(p.name))
		default:
		}
	}
	return nil
}

// running says whether the process has not exited yet.
func (p *process) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, and SIGKILL after wait.
func (p *process) stop(wait time.Duration) error {
	if !p.running() {
		return nil // exited earlier; exited() reported it
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(wait):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("%s did not stop within %s of SIGTERM: killed%s", p.name, wait, p.out.quote(p.name))
}
