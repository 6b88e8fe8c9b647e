package terraform

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// adoptOrphans makes the job process the "subreaper" of what it starts:
// terraform runs in a process group of its own (terraform-exec's choice), so
// a process a provisioner left behind (the `sleep` of `sh -c "…; sleep 60"`
// whose shell terraform killed on an interrupt) would otherwise outlive the
// job, out of the runner's reach. Adopted, killLeftovers finds it.
func adoptOrphans() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// killLeftovers kills, with their process groups, the children the job
// process still has once terraform exited (but daemons, see DaemonEnv), and
// reaps them. It returns how many it found.
func killLeftovers() int {
	self := os.Getpid()
	killed := 0
	for range 5 { // a killed group may orphan more, which come to us
		pids := childrenOf(self)
		if len(pids) == 0 {
			break
		}
		for _, c := range pids {
			if !c.exited && isDaemon(c.pid) {
				continue // started to outlive the job, on purpose
			}
			if !c.exited {
				if pgid, err := syscall.Getpgid(c.pid); err == nil && pgid != syscall.Getpgrp() {
					_ = syscall.Kill(-pgid, syscall.SIGKILL)
				}
				_ = syscall.Kill(c.pid, syscall.SIGKILL)
				killed++
			}
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(c.pid, &ws, 0, nil)
		}
	}
	return killed
}

// DaemonEnv marks, in its environment, a process that a provisioner starts
// to outlive the job on purpose — a local stand-in for infrastructure, such
// as the example sandbox's registry. killLeftovers leaves it running; it is
// the module's to stop (a destroy-time provisioner).
const DaemonEnv = "OUTPOST_DAEMON=1"

// isDaemon says the process carries DaemonEnv.
func isDaemon(pid int) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if string(kv) == DaemonEnv {
			return true
		}
	}
	return false
}

type child struct {
	pid    int
	exited bool // a zombie, waiting to be reaped
}

// childrenOf lists the processes whose parent is ppid, from /proc.
func childrenOf(ppid int) []child {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []child
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(stat[i+1:])
		if len(fields) < 2 {
			continue
		}
		if p, err := strconv.Atoi(string(fields[1])); err == nil && p == ppid {
			pids = append(pids, child{pid: pid, exited: string(fields[0]) == "Z"})
		}
	}
	return pids
}
