//go:build !linux

package runner

import "syscall"

// jobSysProcAttr puts a job process in a process group of its own. Only
// Linux has a parent-death signal: elsewhere a job outlives a runner that
// is killed (the runner is built for Linux; this keeps it building for
// development on other systems).
func jobSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// hideFromJobs does nothing here: only Linux is supported for it.
func hideFromJobs() error { return nil }
