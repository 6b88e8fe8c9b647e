//go:build unix

package terraform

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// flock takes an exclusive lock on the file at path (made if missing),
// waiting for it until ctx ends, and returns its release. Jobs are
// processes of their own: the lock is the kernel's (flock), which a job
// that dies lets go of.
func flock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the file releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
