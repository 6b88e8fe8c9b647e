package runner

import "syscall"

// jobSysProcAttr puts a job process in a process group of its own, and asks the kernel for
// a SIGHUP to it if the runner dies, even by SIGKILL (see dieWithRunner).
func jobSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
}

// prSetDumpable is prctl's PR_SET_DUMPABLE.
const prSetDumpable = 4

// hideFromJobs makes the runner's process not dumpable: its /proc files
// (environ, mem) are then root's, so a job of the same uid that is not root
// cannot read the token in its environment or memory. A job process, once
// exec'd, is dumpable again.
func hideFromJobs() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
