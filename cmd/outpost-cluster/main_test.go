package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/localcluster"
)

func TestRunsUntilSIGTERMThenStopsCleanly(t *testing.T) {
	assets := testAssets(t)
	work := t.TempDir()
	dir := filepath.Join(work, "cluster")
	kubeconfig := filepath.Join(work, "out", "kubeconfig")
	pidFile := filepath.Join(work, "out", "pid")

	// What a cluster killed earlier left in the directory.
	stale := filepath.Join(dir, "etcd", "member", "stale")
	if err := os.MkdirAll(filepath.Dir(stale), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}

	p := startCluster(t, work, []string{localcluster.EnvAssets + "=" + assets}, "-dir", dir, "-kubeconfig-file", kubeconfig, "-pid-file", pidFile)
	cmd, exited, stdout, stderr := p.cmd, p.exited, p.stdout, p.stderr

	// Wait for the kubeconfig, as a script would.
	p.waitFor(t, func() bool { _, err := os.Stat(kubeconfig); return err == nil })

	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the new cluster kept the old one's etcd data (%v)", err)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("pid file: %q %v; want %d", pid, err, cmd.Process.Pid)
	}
	if fi, err := os.Stat(kubeconfig); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode: %v %v; want 0600", fi.Mode().Perm(), err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("the kubeconfig does not reach the cluster: %v", err)
	}
	if !strings.Contains(stdout.String(), "API server at "+cfg.Host) || !strings.Contains(stdout.String(), "kubeconfig: "+kubeconfig) {
		t.Errorf("stdout does not say where the cluster is:\n%s", stdout.String())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("after SIGTERM: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "outpost-cluster: stopped") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	for _, p := range []string{kubeconfig, pidFile, filepath.Join(dir, "etcd"), filepath.Join(dir, "certs")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there after the stop (%v)", p, err)
		}
	}
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err == nil {
		t.Error("the API server still answers after the stop")
	}
}

func TestMissingBinariesAreExplained(t *testing.T) {
	bin := testutil.BuildMain(t, "outpost-cluster")
	empty := t.TempDir()
	cmd := exec.Command(bin, "-kube-assets", empty)
	cmd.Dir = empty
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "scripts/tools.sh") || !strings.Contains(string(out), empty) {
		t.Errorf("with an empty -kube-assets: %v\n%s", err, out)
	}
}

// With -assets-wait, missing binaries are waited for (a build under way),
// saying so; they appear, and the cluster starts.
func TestWaitsForBinariesThatAppear(t *testing.T) {
	assets := testAssets(t)
	work := t.TempDir()
	later := filepath.Join(work, "assets")
	if err := os.Mkdir(later, 0o755); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(work, "kubeconfig")
	p := startCluster(t, work, nil, "-dir", filepath.Join(work, "cluster"), "-kubeconfig-file", kubeconfig, "-kube-assets", later, "-assets-wait", "5m")
	p.waitFor(t, func() bool {
		return strings.Contains(p.stdout.String(), "outpost-cluster: waiting for etcd and kube-apiserver (0s so far, up to 5m0s)")
	})
	for _, b := range localcluster.Binaries {
		if err := os.Symlink(filepath.Join(assets, b), filepath.Join(later, b)); err != nil {
			t.Fatal(err)
		}
	}
	p.waitFor(t, func() bool { _, err := os.Stat(kubeconfig); return err == nil })
}

// A wait that ends with no binaries fails, saying how long it waited.
func TestAssetsWaitEnds(t *testing.T) {
	empty := t.TempDir()
	cmd := exec.Command(testutil.BuildMain(t, "outpost-cluster"), "-kube-assets", empty, "-assets-wait", "3s")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "outpost-cluster: waiting for etcd and kube-apiserver") ||
		!strings.Contains(string(out), "-assets-wait: etcd and kube-apiserver did not appear within 3s") || !strings.Contains(string(out), empty) {
		t.Errorf("with an empty -kube-assets and -assets-wait 3s: %v\n%s", err, out)
	}
}

// testAssets is the directory of etcd and kube-apiserver as the test finds
// them, for processes started in other directories.
func testAssets(t *testing.T) string {
	wd, _ := os.Getwd()
	assets, err := localcluster.FindAssets(os.Getenv(localcluster.EnvAssets), wd)
	if err != nil {
		t.Fatal(err)
	}
	return assets
}

// clusterProc is an outpost-cluster process a test started.
type clusterProc struct {
	cmd            *exec.Cmd
	exited         chan error
	stdout, stderr *testutil.LockedBuffer
}

// startCluster starts outpost-cluster in dir with env added to the test's;
// it gets SIGTERM when the test ends, if still running.
func startCluster(t *testing.T, dir string, env []string, args ...string) *clusterProc {
	p := &clusterProc{cmd: exec.Command(testutil.BuildMain(t, "outpost-cluster"), args...), exited: make(chan error, 1),
		stdout: &testutil.LockedBuffer{}, stderr: &testutil.LockedBuffer{}}
	p.cmd.Dir, p.cmd.Env = dir, append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			<-p.exited
		}
	})
	return p
}

// waitFor waits until done says so, failing if the process exits first or
// nothing happens for 3 minutes (a wait for a state, not a timing
// assertion).
func (p *clusterProc) waitFor(t *testing.T, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !done() {
		select {
		case err := <-p.exited:
			t.Fatalf("outpost-cluster exited: %v\nstdout:\n%s\nstderr:\n%s", err, p.stdout.String(), p.stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after 3 minutes\nstdout:\n%s\nstderr:\n%s", p.stdout.String(), p.stderr.String())
		}
	}
}
