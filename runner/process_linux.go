package runner

import "syscall"

// jobSysProcAttr puts a job process in a process group of its own, so a
// signal reaches the whole job tree; and asks the kernel for a SIGHUP to it
// if the runner dies (even by SIGKILL), on which the job process kills its
// whole group (see RunJobProcess): a dead runner leaves no attempt running
// while the control plane hands out the next.
func jobSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
}
