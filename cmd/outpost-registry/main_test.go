package main

import (
	"bytes"
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

var binary string

func TestMain(m *testing.M) { testutil.RunWithMain(m, "outpost-registry", &binary) }

// process is a running outpost-registry.
type process struct {
	cmd      *exec.Cmd
	stderr   *bytes.Buffer
	addr     string
	addrFile string
	pidFile  string
}

func startBinary(t *testing.T, dir string, env ...string) *process {
	t.Helper()
	files := t.TempDir()
	p := &process{
		stderr:   &bytes.Buffer{},
		addrFile: filepath.Join(files, "addr"),
		pidFile:  filepath.Join(files, "pid"),
	}
	p.cmd = exec.Command(binary, "-dir", dir, "-addr-file", p.addrFile, "-pid-file", p.pidFile)
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(p.addrFile)
		if err == nil {
			p.addr = strings.TrimSpace(string(b))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no address file after 20s; stderr:\n%s", p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

// stop signals the pid of the pid file, as a sandbox's destroy does.
func (p *process) stop(t *testing.T) {
	t.Helper()
	pid := readPidFile(t, p.pidFile)
	if pid != p.cmd.Process.Pid {
		t.Fatalf("pid file holds %d, the process is %d", pid, p.cmd.Process.Pid)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v; stderr:\n%s", err, p.stderr)
	}
	for _, f := range []string{p.addrFile, p.pidFile} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s still there after a graceful stop", f)
		}
	}
}

// readPidFile reads the pid a pid file holds.
func readPidFile(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file holds %q", b)
	}
	return pid
}

func TestServesWithBasicAuthAndKeepsDataAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	env := []string{"OUTPOST_REGISTRY_USERNAME=install", "OUTPOST_REGISTRY_PASSWORD=pa55word"}
	p := startBinary(t, dir, env...)
	if !strings.HasPrefix(p.addr, "127.0.0.1:") {
		t.Fatalf("address file holds %q, want 127.0.0.1:port", p.addr)
	}

	img, err := random.Image(2048, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(p.addr+"/app/web:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	auth := remote.WithAuth(&authn.Basic{Username: "install", Password: "pa55word"})
	if err := remote.Write(ref, img, auth); err != nil {
		t.Fatalf("push: %v", err)
	}
	if _, err := remote.Image(ref, remote.WithAuth(&authn.Basic{Username: "install", Password: "nope"})); err == nil {
		t.Fatal("pull with a wrong password succeeded")
	}
	p.stop(t)
	if strings.Contains(p.stderr.String(), "pa55word") {
		t.Errorf("the password is in the registry's output:\n%s", p.stderr)
	}

	p = startBinary(t, dir, env...)
	ref, _ = name.ParseReference(p.addr+"/app/web:v1", name.Insecure)
	got, err := remote.Image(ref, auth)
	if err != nil {
		t.Fatalf("pull after restart: %v", err)
	}
	gotDigest, _ := got.Digest()
	wantDigest, _ := img.Digest()
	if gotDigest != wantDigest {
		t.Fatalf("after restart %s, pushed %s", gotDigest, wantDigest)
	}
	p.stop(t)
}

func TestOpenWithoutCredentials(t *testing.T) {
	p := startBinary(t, t.TempDir())
	ref, _ := name.ParseReference(p.addr+"/app/web:v1", name.Insecure)
	img, _ := random.Image(512, 1)
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("anonymous push to an open registry: %v", err)
	}
	p.stop(t)
}

func TestBadArgumentsAreNamed(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"no dir", nil, nil, "-dir is required"},
		{"only a username", []string{"-dir", t.TempDir()}, []string{"OUTPOST_REGISTRY_USERNAME=u"}, "OUTPOST_REGISTRY_PASSWORD"},
		{"bad address", []string{"-dir", t.TempDir(), "-addr", "256.0.0.1:1"}, nil, "256.0.0.1:1"},
		{"readiness on stderr", []string{"-dir", t.TempDir()}, []string{"OUTPOST_REGISTRY_READY_FD=2"}, "OUTPOST_REGISTRY_READY_FD=\"2\": want a file descriptor above 2"},
		{"readiness on no pipe", []string{"-dir", t.TempDir()}, []string{"OUTPOST_REGISTRY_READY_FD=3"}, "OUTPOST_REGISTRY_READY_FD=3: not a pipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(binary, tc.args...)
			cmd.Env = tc.env
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(out), tc.want) {
				t.Fatalf("exit %d, output %q; want a failure naming %q", cmd.ProcessState.ExitCode(), out, tc.want)
			}
		})
	}
}
