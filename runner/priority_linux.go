package runner

import (
	"runtime"
	"syscall"
)

// canRaiseBack lowers a thread's priority by one step and raises it back.
// The thread is never handed back to the Go scheduler: it ends with the
// goroutine, whatever its priority.
func canRaiseBack(own int) bool {
	ok := make(chan bool)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread exits with this goroutine
		tid := syscall.Gettid()
		ok <- syscall.Setpriority(syscall.PRIO_PROCESS, tid, min(own+1, 19)) == nil &&
			syscall.Setpriority(syscall.PRIO_PROCESS, tid, own) == nil
	}()
	return <-ok
}

// startLowered calls start on an OS thread lowered for the time, so the process it forks is
// born lowered (a child gets the nice value of its forking thread), and all it starts too.
func (p priorities) startLowered(start func() error) error {
	if p.lower == 0 {
		return start()
	}
	runtime.LockOSThread()
	tid := syscall.Gettid()
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, min(p.own+p.lower, 19)); err != nil {
		runtime.UnlockOSThread()
		return start()
	}
	err := start()
	if syscall.Setpriority(syscall.PRIO_PROCESS, tid, p.own) == nil {
		runtime.UnlockOSThread()
	} // else the thread stays with this goroutine, and ends with it
	return err
}
