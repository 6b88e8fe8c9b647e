package terraform

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// adoptOrphans makes the job process the subreaper of what it starts, so that killLeftovers finds
// what provisioners leave behind, out of the runner's reach in terraform's own process group.
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
	killed, quiet := 0, false
	for range 5 { // a killed group may orphan more, which come to us
		acted := false
		for _, c := range childrenOf(self) {
			if !c.exited && isDaemon(c.pid) {
				continue // started to outlive the job, on purpose
			}
			acted = true
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
		if !acted {
			// None left, or daemons only — unless a thread that ended
			// while they were listed passed its children on: look once more.
			if quiet {
				break
			}
			quiet = true
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

// childrenOf lists the processes whose parent is ppid: from the kernel's
// list of each of its threads' children (/proc/<ppid>/task/<tid>/children),
// or, on a kernel without those files, by reading every process's stat.
func childrenOf(ppid int) []child {
	if pids, ok := taskChildren(ppid); ok {
		return pids
	}
	return scanChildren(ppid)
}

// taskChildren reads the children files of ppid's threads; ok is false when
// the kernel has none (CONFIG_PROC_CHILDREN unset).
func taskChildren(ppid int) (pids []child, ok bool) {
	dir := "/proc/" + strconv.Itoa(ppid) + "/task/"
	if _, err := os.Stat(dir + strconv.Itoa(ppid) + "/children"); err != nil {
		return nil, false
	}
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	for _, t := range tasks {
		list, err := os.ReadFile(dir + t.Name() + "/children")
		if err != nil {
			continue // the thread ended
		}
		for _, f := range bytes.Fields(list) {
			pid, err := strconv.Atoi(string(f))
			if err != nil {
				continue
			}
			if state, _, ok := procStat(pid); ok {
				pids = append(pids, child{pid: pid, exited: state == "Z"})
			}
		}
	}
	return pids, true
}

// scanChildren finds ppid's children among all processes, from /proc.
func scanChildren(ppid int) []child {
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
		if state, parent, ok := procStat(pid); ok && parent == ppid {
			pids = append(pids, child{pid: pid, exited: state == "Z"})
		}
	}
	return pids
}

// procStat reads a process's state and parent from /proc/<pid>/stat.
func procStat(pid int) (state string, ppid int, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", 0, false
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(string(fields[1]))
	return string(fields[0]), ppid, err == nil
}
