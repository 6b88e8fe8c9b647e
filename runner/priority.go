package runner

import (
	"syscall"
	"time"
)

// prestartNice is how many nice steps lower a job with deferred inputs runs until they come
// (about a tenth of a busy normal process's CPU); see docs/architecture/runner.md.
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

// newPriorities finds, by trying on a thread of its own, whether the runner may raise a
// priority back (CAP_SYS_NICE or RLIMIT_NICE); if not, prestarted jobs are not lowered.
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
