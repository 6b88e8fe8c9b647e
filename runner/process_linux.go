package runner

import "syscall"

// jobSysProcAttr puts a job process in a process group of its own, and asks the kernel for
// a SIGHUP to it if the runner dies, even by SIGKILL (see dieWithRunner).
func jobSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
}
