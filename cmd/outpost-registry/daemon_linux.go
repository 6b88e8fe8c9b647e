package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// daemonEnv marks the daemon as meant to outlive the runner job that
// started it: runner/plugins/terraform's DaemonEnv, which must match.
const daemonEnv = "OUTPOST_DAEMON=1"

// The timing of up and down.
const (
	startTimeout = 10 * time.Second // up: until the daemon listens
	stopTimeout  = 10 * time.Second // down: after SIGTERM, before SIGKILL
	killTimeout  = 5 * time.Second  // down: after SIGKILL
	pollInterval = 50 * time.Millisecond
)

// daemonDir names the files of an up directory.
type daemonDir string

func (d daemonDir) data() string { return filepath.Join(string(d), "data") }
func (d daemonDir) addr() string { return filepath.Join(string(d), "addr") }
func (d daemonDir) pid() string  { return filepath.Join(string(d), "pid") }
func (d daemonDir) log() string  { return filepath.Join(string(d), "log") }
func (d daemonDir) lock() string { return filepath.Join(string(d), "lock") }

// serveArgs are the arguments of the daemon after its executable: what
// serving finds it by in /proc.
func (d daemonDir) serveArgs(addr string) []string {
	return []string{"serve", "-dir", d.data(), "-addr", addr, "-addr-file", d.addr(), "-pid-file", d.pid()}
}

// known says name may be in an up directory; down removes no other.
func known(name string) bool {
	switch name {
	case "data", "addr", "pid", "log", "lock":
		return true
	}
	// writeFileAtomic's temporary files, left by a kill mid-write.
	return strings.HasPrefix(name, ".addr.") || strings.HasPrefix(name, ".pid.")
}

func runUp(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var dir, addr string
	flags := flagSet("up", stderr)
	flags.StringVar(&dir, "dir", "", "`directory` of the daemon: data/, log, pid, addr (required)")
	flags.StringVar(&addr, "addr", "", "`host:port` to listen on, with a fixed port (required)")
	if code := parse(flags, args, getenv, stderr); code >= 0 {
		return code
	}
	fail := failer(stderr, "up")
	if dir == "" {
		return fail(2, "-dir is required")
	}
	if addr == "" {
		return fail(2, "-addr is required: the host:port of the install's registry, with a fixed port (127.0.0.1:5000)")
	}
	if err := checkFixedAddr(addr); err != nil {
		return fail(2, "%v", err)
	}
	if _, err := authFromEnv(getenv); err != nil {
		return fail(2, "%v", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(1, "%v", err)
	}
	d, err := resolve(dir)
	if err != nil {
		return fail(1, "%v", err)
	}
	unlock, err := lockDir(d, true)
	if err != nil {
		return fail(1, "%v", err)
	}
	defer unlock()

	if pid := running(d); pid != 0 {
		got, err := waitAddr(ctx, d, pid)
		if err != nil {
			return fail(1, "the registry of %s runs (pid %d) but %v; see %s", d, pid, err, d.log())
		}
		if !sameAddr(addr, got) {
			return fail(1, "the registry of %s already runs (pid %d) on %s, not on %s: run \"outpost-registry down -dir %s\" first to move it",
				d, pid, got, addr, d)
		}
		fmt.Fprintf(stdout, "install registry listening on %s (already running, pid %d)\n", got, pid)
		return 0
	}
	got, err := start(ctx, d, addr, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "outpost-registry up: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "install registry listening on %s\n", got)
	return 0
}

// checkFixedAddr refuses an address without a fixed port.
func checkFixedAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: %v (want host:port, such as 127.0.0.1:5000)", addr, err)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fmt.Errorf("-addr %q: port %q is not a number from 1 to 65535", addr, port)
	}
	if n == 0 {
		return fmt.Errorf("-addr %q: port 0 would pick another free port on every start, "+
			"but this is an install's registry, whose address is recorded (in terraform outputs) "+
			"and must stay the same across restarts: give a fixed port", addr)
	}
	return nil
}

// sameAddr says the daemon listening on got serves the requested address:
// the same port, and the same host unless one is a name.
func sameAddr(requested, got string) bool {
	rh, rp, err1 := net.SplitHostPort(requested)
	gh, gp, err2 := net.SplitHostPort(got)
	if err1 != nil || err2 != nil || rp != gp {
		return false
	}
	rip, gip := net.ParseIP(rh), net.ParseIP(gh)
	if rh == "" || rip != nil && rip.IsUnspecified() {
		return gip == nil || gip.IsUnspecified()
	}
	return rip == nil || gip == nil || rip.Equal(gip)
}

// start starts the daemon, waits until it listens and returns its address.
func start(ctx context.Context, d daemonDir, addr string, getenv func(string) string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this executable: %w", err)
	}
	// A daemon killed without a graceful stop leaves these behind; the new
	// one's tell it listens.
	for _, f := range []string{d.pid(), d.addr()} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	log, err := os.OpenFile(d.log(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return "", err
	}
	defer log.Close()
	// Where this start's lines begin, for the tail on a failure.
	from, err := log.Seek(0, io.SeekEnd)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "outpost-registry up: %s: starting on %s\n", time.Now().UTC().Format(time.RFC3339), addr)

	// Only what the daemon needs: not the rest of a terraform job's
	// environment (cloud credentials, tokens), which it would keep for as
	// long as it runs.
	env := []string{daemonEnv}
	for _, k := range []string{envUsername, envPassword, "TMPDIR"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	// The daemon says on this pipe when it listens (envReadyFD), so up
	// returns then rather than at its next look at the files.
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer readyR.Close()
	cmd := exec.Command(self, d.serveArgs(addr)...)
	cmd.Env = append(env, envReadyFD+"=3")
	cmd.Dir = "/" // not the job's working directory, which may go away
	cmd.Stdin = nil
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.ExtraFiles = []*os.File{readyW} // fd 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		return "", fmt.Errorf("starting %s: %w", self, err)
	}
	pid := cmd.Process.Pid
	ready := make(chan struct{}, 1) // it listens, or it closed the pipe (exited)
	go func() {
		_, _ = readyR.Read(make([]byte, 1))
		ready <- struct{}{}
	}()

	failed := func(why string) error {
		return fmt.Errorf("the registry did not start on %s: %s%s", addr, why, logTail(d.log(), from))
	}
	deadline := time.Now().Add(startTimeout)
	for {
		if got, ok := listening(d, pid); ok {
			_ = cmd.Process.Release() // it runs on, no longer ours to wait for
			return got, nil
		}
		var ws syscall.WaitStatus
		if p, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); p == pid || err != nil {
			why := "it exited"
			if err == nil {
				why = "it " + exitStatus(ws)
			}
			if bytes.Contains(readFrom(d.log(), from), []byte(syscall.EADDRINUSE.Error())) {
				why = fmt.Sprintf("%s is already in use by another process (stop that one, or pick another port); %s", addr, why)
			}
			return "", failed(why)
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL) // its session's group
			_, _ = cmd.Process.Wait()
			why := fmt.Sprintf("it did not listen within %s and was killed", startTimeout)
			if ctx.Err() != nil {
				why = "interrupted; it was killed"
			}
			return "", failed(why)
		}
		select {
		case <-ready:
		case <-time.After(pollInterval):
		}
	}
}

func exitStatus(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "was killed by " + ws.Signal().String()
	}
	return "exited with status " + strconv.Itoa(ws.ExitStatus())
}

// listening returns the daemon's address once it has written its pid, then
// its address.
func listening(d daemonDir, pid int) (string, bool) {
	if p, err := readPid(d.pid()); err != nil || p != pid {
		return "", false
	}
	b, err := os.ReadFile(d.addr())
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// waitAddr waits for the address of a running daemon (one that a previous
// up saw start but not yet listen).
func waitAddr(ctx context.Context, d daemonDir, pid int) (string, error) {
	deadline := time.Now().Add(startTimeout)
	for {
		if got, ok := listening(d, pid); ok {
			return got, nil
		}
		if !serving(pid, d) {
			return "", errors.New("it exited")
		}
		if ctx.Err() != nil {
			return "", errors.New("up was interrupted")
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("has not written %s within %s", d.addr(), startTimeout)
		}
		time.Sleep(pollInterval)
	}
}

// logTail is the last lines of the log from offset from, as the end of an
// error message.
func logTail(path string, from int64) string {
	b := bytes.TrimRight(readFrom(path, from), "\n")
	if len(b) == 0 {
		return "; " + path + " has nothing from it"
	}
	const maxLines, maxBytes = 20, 4096
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	b = bytes.Join(lines, []byte("\n"))
	if len(b) > maxBytes {
		b = b[len(b)-maxBytes:]
	}
	return "; " + path + " ends:\n" + string(b)
}

func readFrom(path string, from int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return b
}

// failer is how a daemon command (up, down) fails: it says why on stderr,
// named after the command, and returns the exit code given.
func failer(stderr io.Writer, cmd string) func(code int, format string, a ...any) int {
	return func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "outpost-registry "+cmd+": "+format+"\n", a...)
		return code
	}
}

func runDown(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var dir string
	flags := flagSet("down", stderr)
	flags.StringVar(&dir, "dir", "", "`directory` given to up (required)")
	if code := parse(flags, args, getenv, stderr); code >= 0 {
		return code
	}
	fail := failer(stderr, "down")
	if dir == "" {
		return fail(2, "-dir is required")
	}
	d, err := resolve(dir)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stdout, "install registry already stopped (no %s)\n", dir)
		return 0
	}
	if err != nil {
		return fail(1, "%v", err)
	}
	unlock, err := lockDir(d, false)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stdout, "install registry already stopped (no %s)\n", dir)
		return 0
	}
	if err != nil {
		return fail(1, "%v", err)
	}
	defer unlock()

	// Refuse to remove a directory that up did not make (a mistyped -dir).
	entries, err := os.ReadDir(string(d))
	if err != nil {
		return fail(1, "%v", err)
	}
	for _, e := range entries {
		if !known(e.Name()) {
			return fail(1, "%s holds %q, which outpost-registry up does not make: not removing it (is -dir right?)", d, e.Name())
		}
	}

	stopped := "already stopped"
	if pid := running(d); pid != 0 {
		if err := stop(ctx, d, pid); err != nil {
			return fail(1, "%v", err)
		}
		stopped = fmt.Sprintf("stopped (pid %d)", pid)
	}
	if err := os.RemoveAll(string(d)); err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintf(stdout, "install registry %s; removed %s\n", stopped, d)
	return 0
}

// stop sends SIGTERM, SIGKILL after stopTimeout, and waits until the daemon
// is gone.
func stop(ctx context.Context, d daemonDir, pid int) error {
	gone := func(timeout time.Duration) (bool, error) {
		deadline := time.Now().Add(timeout)
		for serving(pid, d) {
			if ctx.Err() != nil {
				return false, fmt.Errorf("interrupted while stopping the registry (pid %d)", pid)
			}
			if time.Now().After(deadline) {
				return false, nil
			}
			time.Sleep(pollInterval)
		}
		return true, nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping the registry (pid %d): %w", pid, err)
	}
	if ok, err := gone(stopTimeout); ok || err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing the registry (pid %d): %w", pid, err)
	}
	if ok, err := gone(killTimeout); ok || err != nil {
		return err
	}
	return fmt.Errorf("the registry (pid %d) still runs %s after SIGKILL", pid, killTimeout)
}

// resolve makes dir absolute without symbolic links, so that up and down
// given different spellings of one directory agree on the daemon's command
// line.
func resolve(dir string) (daemonDir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	return daemonDir(real), nil
}

// lockDir takes DIR/lock, creating it when create is set (else a missing
// lock file is fs.ErrNotExist). A down removes DIR, lock file and all, while
// holding it; a waiter then locks the new file rather than the removed one.
func lockDir(d daemonDir, create bool) (unlock func(), err error) {
	for {
		if create {
			if err := os.MkdirAll(string(d), 0o700); err != nil {
				return nil, err
			}
		}
		flags := os.O_RDONLY
		if create {
			flags = os.O_RDWR | os.O_CREATE
		}
		f, err := os.OpenFile(d.lock(), flags, 0o600)
		if errors.Is(err, fs.ErrNotExist) && !create {
			// No up got as far as the lock: nothing to wait for. A DIR
			// without one is still down's to remove.
			if _, err := os.Stat(string(d)); err != nil {
				return nil, err
			}
			return func() {}, nil
		}
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", d.lock(), err)
		}
		var held, now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Stat(d.lock(), &now) == nil &&
			held.Dev == now.Dev && held.Ino == now.Ino {
			return func() { f.Close() }, nil
		}
		f.Close()
		if !create {
			if _, err := os.Stat(string(d)); err != nil {
				return nil, err // removed by another down
			}
		}
	}
}

// running is the pid of the daemon serving d, or 0: the one of d's pid
// file, or else one found in /proc (still starting, or its pid file lost).
func running(d daemonDir) int {
	if pid, err := readPid(d.pid()); err == nil && serving(pid, d) {
		return pid
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != os.Getpid() && serving(pid, d) {
			return pid
		}
	}
	return 0
}

// serving says pid is a live process running "outpost-registry serve" for
// d (whatever its address): a zombie, or a process that took a dead
// daemon's pid, is not.
func serving(pid int, d daemonDir) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 { // a zombie's is empty
		return false
	}
	argv := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	want := d.serveArgs("")
	if len(argv) != len(want)+1 {
		return false
	}
	got := argv[1:]
	got[4] = "" // the address
	return slices.Equal(got, want)
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s holds %q, not a pid", path, b)
	}
	return pid, nil
}
