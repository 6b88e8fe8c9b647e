//go:build unix

package terraform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
)

// varsPipe hands terraform its variables through a named pipe given as -var-file, so that
// terraform starts before deferred inputs come and blocks on the pipe (see the package doc).
type varsPipe struct {
	path string
	// opened gets the pipe's writing end once terraform opened the pipe to
	// read it (or once release unblocked the open).
	opened chan *os.File
	// released: release opened the pipe, not terraform.
	released atomic.Bool
}

// newVarsPipe makes the pipe in the job's directory (outside the module, so
// that terraform does not also load it as an *.auto.tfvars file) and starts
// waiting for terraform to open it; onOpen runs once it has.
func newVarsPipe(dir string, onOpen func()) (*varsPipe, error) {
	// Absolute: terraform runs in the module's directory.
	path, err := filepath.Abs(filepath.Join(dir, varsPipeName))
	if err != nil {
		return nil, fmt.Errorf("the variables' pipe: %w", err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("the variables' pipe: %w", &os.PathError{Op: "mkfifo", Path: path, Err: err})
	}
	v := &varsPipe{path: path, opened: make(chan *os.File, 1)}
	go func() {
		// Blocks until a reader opens the pipe.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		switch {
		case err != nil:
			f = nil
		case !v.released.Load():
			onOpen()
		}
		v.opened <- f
	}()
	return v, nil
}

// errNotRead: terraform ended without reading its variables.
var errNotRead = errors.New("terraform ended before it read its variables")

// give writes the variables once terraform opened the pipe, unless it ended
// first (exited closed): then errNotRead, and terraform's own error says
// why.
func (v *varsPipe) give(vars []byte, exited <-chan struct{}) error {
	select {
	case f := <-v.opened:
		if f == nil {
			return fmt.Errorf("the variables' pipe %s could not be opened", v.path)
		}
		_, err := f.Write(vars)
		f.Close() // terraform has them all once the write returned
		if err != nil {
			return fmt.Errorf("writing the variables to terraform: %w", err)
		}
		return nil
	case <-exited:
		v.release()
		return errNotRead
	}
}

// release ends the wait for a reader when terraform will never open the
// pipe: opening it to read (without blocking) completes the writer's open,
// and both ends are closed.
func (v *varsPipe) release() {
	v.released.Store(true)
	r, err := os.OpenFile(v.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// The writer's open may stay blocked: leave it (the job process
		// ends soon), and close its end if it got one.
		select {
		case f := <-v.opened:
			if f != nil {
				f.Close()
			}
		default:
		}
		return
	}
	if f := <-v.opened; f != nil {
		f.Close()
	}
	r.Close()
}
