package main

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/outpost-dev/outpost/internal/testutil"
)

const testPassword = "s3cret-Pa55word"

var testCreds = []string{"OUTPOST_REGISTRY_USERNAME=install", "OUTPOST_REGISTRY_PASSWORD=" + testPassword}

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return "exit " + strconv.Itoa(r.code) + "\nstdout: " + r.stdout + "\nstderr: " + r.stderr
}

// runBinary runs the binary to its end, failing the test if that takes a
// minute: up must not wait for the daemon (nor the daemon keep its pipes).
func runBinary(t *testing.T, env []string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %v: %v\nstderr: %s", binary, args, err, stderr.String())
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// noPassword fails the test if the password is in any of texts.
func noPassword(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, testPassword) {
			t.Errorf("the password is printed:\n%s", s)
		}
	}
}

// killOnCleanup kills the daemon of pid file if a test leaves it running.
func killOnCleanup(t *testing.T, pidFile string) {
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// stat is the state, parent and session of pid, from /proc/pid/stat.
func stat(t *testing.T, pid int) (state string, ppid, sid int) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ppid, _ = strconv.Atoi(fields[1])
	sid, _ = strconv.Atoi(fields[3])
	return fields[0], ppid, sid
}

// gone says pid no longer runs (a zombie, which its new parent may not reap,
// counts as gone).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return fields[0] == "Z" || fields[0] == "X"
}

func getV2(t *testing.T, addr string, auth bool) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v2/", nil)
	if auth {
		req.SetBasicAuth("install", testPassword)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /v2/ on %s: %v", addr, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestUpDown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "install", "registry")
	addr := testutil.FreeAddr(t)
	killOnCleanup(t, filepath.Join(dir, "pid"))
	var outputs []string

	up := runBinary(t, testCreds, "up", "-dir", dir, "-addr", addr)
	outputs = append(outputs, up.stdout, up.stderr)
	if up.code != 0 || !strings.Contains(up.stdout, "install registry listening on "+addr) {
		t.Fatalf("up: %s", up)
	}
	pid := readPidFile(t, filepath.Join(dir, "pid"))

	// A registry answers on addr, to the user of the environment only.
	if code := getV2(t, addr, false); code != http.StatusUnauthorized {
		t.Errorf("GET /v2/ without credentials: %d, want 401", code)
	}
	if code := getV2(t, addr, true); code != http.StatusOK {
		t.Errorf("GET /v2/ with credentials: %d, want 200", code)
	}
	ref, err := name.ParseReference(addr+"/app/web:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, _ := random.Image(1024, 1)
	auth := remote.WithAuth(&authn.Basic{Username: "install", Password: testPassword})
	if err := remote.Write(ref, img, auth); err != nil {
		t.Fatalf("push: %v", err)
	}
	if _, err := remote.Image(ref, auth); err != nil {
		t.Fatalf("pull: %v", err)
	}

	// A daemon: in a session of its own, not the test's child, marked for
	// the runner to leave running.
	if _, ppid, sid := stat(t, pid); ppid == os.Getpid() || sid != pid {
		t.Errorf("daemon %d: parent %d (the test is %d), session %d; want another parent and its own session", pid, ppid, os.Getpid(), sid)
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if !contains(strings.Split(string(environ), "\x00"), "OUTPOST_DAEMON=1") {
		t.Errorf("daemon environment lacks OUTPOST_DAEMON=1")
	}
	// Detached from the streams of whoever ran up.
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(realDir, "log")
	for fd, want := range []string{"/dev/null", log, log} {
		if got, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.Itoa(fd)); err != nil || got != want {
			t.Errorf("daemon fd %d is %q (%v), want %s", fd, got, err, want)
		}
	}

	// Up again: the same daemon.
	again := runBinary(t, testCreds, "up", "-dir", dir, "-addr", addr)
	outputs = append(outputs, again.stdout, again.stderr)
	if again.code != 0 || !strings.Contains(again.stdout, "install registry listening on "+addr) {
		t.Fatalf("up again: %s", again)
	}
	if p := readPidFile(t, filepath.Join(dir, "pid")); p != pid {
		t.Fatalf("up again: pid %d, was %d", p, pid)
	}
	// Up again elsewhere: refused, naming down.
	moved := runBinary(t, testCreds, "up", "-dir", dir, "-addr", testutil.FreeAddr(t))
	outputs = append(outputs, moved.stdout, moved.stderr)
	if moved.code == 0 || !strings.Contains(moved.stderr, "already runs") || !strings.Contains(moved.stderr, "down") {
		t.Errorf("up on another address while running: %s", moved)
	}

	logText, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(logText))

	down := runBinary(t, nil, "down", "-dir", dir)
	outputs = append(outputs, down.stdout, down.stderr)
	if down.code != 0 {
		t.Fatalf("down: %s", down)
	}
	if !gone(pid) {
		t.Errorf("daemon %d still runs after down", pid)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after down: %v, want it removed", dir, err)
	}
	if _, err := os.Stat(filepath.Dir(dir)); err != nil {
		t.Errorf("down removed more than -dir: %v", err)
	}

	downAgain := runBinary(t, nil, "down", "-dir", dir)
	outputs = append(outputs, downAgain.stdout, downAgain.stderr)
	if downAgain.code != 0 || !strings.Contains(downAgain.stdout, "already stopped") {
		t.Fatalf("down again: %s", downAgain)
	}
	noPassword(t, outputs...)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func TestUpAfterTheDaemonWasKilled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "registry")
	addr := testutil.FreeAddr(t)
	killOnCleanup(t, filepath.Join(dir, "pid"))
	if r := runBinary(t, testCreds, "up", "-dir", dir, "-addr", addr); r.code != 0 {
		t.Fatalf("up: %s", r)
	}
	pid := readPidFile(t, filepath.Join(dir, "pid"))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !gone(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("daemon %d survives SIGKILL", pid)
		}
	}
	// Its pid and addr files are stale now.
	r := runBinary(t, testCreds, "up", "-dir", dir, "-addr", addr)
	if r.code != 0 || !strings.Contains(r.stdout, "install registry listening on "+addr) || strings.Contains(r.stdout, "already") {
		t.Fatalf("up after a kill: %s", r)
	}
	if p := readPidFile(t, filepath.Join(dir, "pid")); p == pid {
		t.Fatalf("up after a kill: pid file still names the killed %d", pid)
	}
	if code := getV2(t, addr, true); code != http.StatusOK {
		t.Errorf("GET /v2/ after restart: %d", code)
	}
	if r := runBinary(t, nil, "down", "-dir", dir); r.code != 0 {
		t.Fatalf("down: %s", r)
	}
}

func TestUpOnATakenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	dir := filepath.Join(t.TempDir(), "registry")
	killOnCleanup(t, filepath.Join(dir, "pid"))

	r := runBinary(t, testCreds, "up", "-dir", dir, "-addr", addr)
	if r.code == 0 || !strings.Contains(r.stderr, addr+" is already in use") {
		t.Fatalf("up on a taken port: %s", r)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "log"))
	noPassword(t, r.stdout, r.stderr, string(log))
	if d := runBinary(t, nil, "down", "-dir", dir); d.code != 0 || !strings.Contains(d.stdout, "already stopped") {
		t.Fatalf("down after a failed up: %s", d)
	}
}

func TestUpDownArguments(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"up without dir", []string{"up", "-addr", "127.0.0.1:5000"}, nil, "-dir is required"},
		{"up without addr", []string{"up", "-dir", t.TempDir()}, nil, "-addr is required"},
		{"up on port 0", []string{"up", "-dir", t.TempDir(), "-addr", "127.0.0.1:0"}, nil, "port 0"},
		{"up on a bad port", []string{"up", "-dir", t.TempDir(), "-addr", "127.0.0.1:http"}, nil, "not a number"},
		{"up with only a password", []string{"up", "-dir", t.TempDir(), "-addr", "127.0.0.1:5000"},
			[]string{"OUTPOST_REGISTRY_PASSWORD=" + testPassword}, "OUTPOST_REGISTRY_USERNAME"},
		{"down without dir", []string{"down"}, nil, "-dir is required"},
		{"unknown command", []string{"start"}, nil, `unknown command "start"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBinary(t, tc.env, tc.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("%s; want exit 2 naming %q", r, tc.want)
			}
			noPassword(t, r.stdout, r.stderr)
		})
	}
}

func TestDownKeepsADirectoryUpDidNotMake(t *testing.T) {
	dir := t.TempDir()
	precious := filepath.Join(dir, "precious.txt")
	if err := os.WriteFile(precious, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, nil, "down", "-dir", dir)
	if r.code == 0 || !strings.Contains(r.stderr, "precious.txt") {
		t.Fatalf("down on a foreign directory: %s", r)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Fatalf("down removed a directory up did not make: %v", err)
	}
}

func TestHelp(t *testing.T) {
	r := runBinary(t, nil, "help")
	for _, want := range []string{"outpost-registry up -dir DIR -addr HOST:PORT", "outpost-registry down -dir DIR", "OUTPOST_DAEMON=1"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("help: %s; want %q", r, want)
		}
	}
}
