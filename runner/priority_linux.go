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

// startLowered calls start, which starts a process, so that the process
// starts at the lowered priority (and so does everything it starts): start
// runs on an OS thread whose own priority is lowered for the time, and a
// child is born with the nice value of the thread that forks it. (Lowering
// the process once started would let it run its first instructions at the
// runner's priority.)
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
