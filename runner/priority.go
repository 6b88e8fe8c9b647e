package runner

import (
	"runtime"
	"syscall"
	"time"
)

// prestartNice is how much lower (in nice steps) a job queued with
// deferred inputs runs while it prepares and waits for them: its work then
// (fetching its module, terraform init, terraform's start) is done ahead of
// need, and must not slow the jobs that have their inputs, which the
// operation waits for. Once its inputs come, the job runs at the runner's
// own priority again. At nice +10 a process gets about a tenth of the CPU a
// busy normal one gets.
const prestartNice = 10

// restoreAgain is when the runner restores a job's priority a second time
// (see supervisor.execute).
const restoreAgain = 100 * time.Millisecond

// priorities lowers and restores the CPU priority of a job's process group
// (the job process, terraform and whatever they start).
type priorities struct {
	own int // the runner's nice value
	// lower is the step prestarted jobs are lowered by: prestartNice when
	// the runner may raise their priority back, else 0 (see newPriorities).
	lower int
}

// newPriorities: anyone may lower a process's priority, but raising it back
// takes CAP_SYS_NICE (in the initial user namespace) or an RLIMIT_NICE that
// allows the runner's own nice. Whether the runner may is found by trying,
// on a thread of its own. If it may not, prestarted jobs keep the runner's
// priority: lowered for good, they would lag behind jobs that never waited.
func newPriorities() priorities {
	p := priorities{}
	if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err == nil {
		p.own = 20 - prio // the syscall answers 20 - nice
	}
	if canRaiseBack(p.own) {
		p.lower = prestartNice
	}
	return p
}

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

// restoreGroup gives the process group pgid (a job's: the job process,
// terraform, whatever they started) the runner's own priority back.
func (p priorities) restoreGroup(pgid int) error {
	if p.lower == 0 {
		return nil
	}
	return syscall.Setpriority(syscall.PRIO_PGRP, pgid, p.own)
}
