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
	bin := testutil.BuildMain(t, "outpost-cluster")
	// The binaries as the test finds them, so that the process started in
	// another directory finds the same ones.
	wd, _ := os.Getwd()
	assets, err := localcluster.FindAssets(os.Getenv(localcluster.EnvAssets), wd)
	if err != nil {
		t.Fatal(err)
	}
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

	cmd := exec.Command(bin, "-dir", dir, "-kubeconfig-file", kubeconfig, "-pid-file", pidFile)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), localcluster.EnvAssets+"="+assets)
	var stdout, stderr testutil.LockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-exited
		}
	})

	// Wait for the kubeconfig, as a script would (a wait for a state, not a
	// timing assertion).
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if _, err := os.Stat(kubeconfig); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("outpost-cluster exited before it was ready: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no kubeconfig after 3 minutes\nstderr:\n%s", stderr.String())
		}
	}

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
