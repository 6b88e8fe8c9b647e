package runner

import (
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

// restoreGroup gives the process group pgid (a job's: the job process,
// terraform, whatever they started) the runner's own priority back.
func (p priorities) restoreGroup(pgid int) error {
	if p.lower == 0 {
		return nil
	}
	return syscall.Setpriority(syscall.PRIO_PGRP, pgid, p.own)
}
