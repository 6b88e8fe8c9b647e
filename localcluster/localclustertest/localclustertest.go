package localclustertest

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/localcluster"
)

// Start starts a cluster of its own for t and stops it when t ends.
func Start(t testing.TB) *localcluster.Cluster {
	t.Helper()
	c, err := localcluster.Start(localcluster.Options{})
	if err != nil {
		t.Fatalf("local cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("local cluster: %v", err)
		}
	})
	return c
}

// StartWithNode starts a cluster of its own with a node (localcluster's
// Options.Node) for t, writing what the node's processes say to
// node.log in a temporary directory of t's, whose errors it logs when t
// fails; it stops the cluster when t ends. It skips t when this host cannot
// run a node (not root, or `scripts/tools.sh node` not run), and fails it
// when the etcd and kube-apiserver binaries are missing.
func StartWithNode(t testing.TB, node localcluster.NodeOptions) *localcluster.Cluster {
	t.Helper()
	if err := localcluster.CheckNode(Assets(t)); errors.Is(err, localcluster.ErrNodeUnsupported) {
		t.Skip(err)
	}
	unlock := LockNodeHost(t)
	bridge := node.Bridge
	if bridge == "" {
		bridge = localcluster.DefaultBridge
	}
	// Holding the host's lock, no other test's node runs: a bridge of this
	// name is one a killed test process left (its cleanups never ran).
	if removeBridge(bridge) {
		t.Logf("removed the bridge %s a killed test process left", bridge)
	}
	logPath := filepath.Join(t.TempDir(), "node.log")
	log, err := os.Create(logPath)
	if err != nil {
		unlock()
		t.Fatal(err)
	}
	c, err := localcluster.Start(localcluster.Options{Output: log, Node: &node})
	if err != nil {
		log.Close()
		unlock()
		t.Fatalf("local cluster with a node: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("local cluster: %v", err)
		}
		if removeBridge(bridge) { // so the next test does not fail for this one
			t.Errorf("the node's bridge %s was still there after Stop", bridge)
		}
		unlock()
		log.Close()
		if t.Failed() {
			logErrors(t, logPath)
		}
	})
	return c
}

// LockNodeHost waits until no other test process on this host runs a node,
// and holds that until the returned unlock: a node's kubelet uses fixed host
// paths (/var/lib/kubelet/device-plugins) and its kernel settings are saved
// and restored host-wide, so two at once (go test runs packages in
// parallel) would step on each other.
func LockNodeHost(t testing.TB) (unlock func()) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "outpost-localcluster-node.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("waiting for other tests' nodes: %v", err)
	}
	return func() { f.Close() } // closing the file releases the lock
}

// removeBridge deletes the network interface name, saying whether there was
// one.
func removeBridge(name string) bool {
	if _, err := net.InterfaceByName(name); err != nil {
		return false
	}
	_ = exec.Command("ip", "link", "del", name).Run()
	return true
}

// Assets finds the directory of the Kubernetes binaries as Start does
// (localcluster.FindAssets from the working directory), failing t without
// one.
func Assets(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	assets, err := localcluster.FindAssets(os.Getenv(localcluster.EnvAssets), wd)
	if err != nil {
		t.Fatalf("local cluster: %v", err)
	}
	return assets
}

// Shared is one cluster for all the tests of a test binary: the first test
// that calls Get starts it, and the package's TestMain calls Stop after
// m.Run. Tests that share it keep to namespaces of their own.
type Shared struct {
	once sync.Once
	c    *localcluster.Cluster
	err  error
}

// Get returns the shared cluster, starting it on first use. A cluster that
// could not start fails every test that asks for it.
func (s *Shared) Get(t testing.TB) *localcluster.Cluster {
	t.Helper()
	s.once.Do(func() { s.c, s.err = localcluster.Start(localcluster.Options{}) })
	if s.err != nil {
		t.Fatalf("local cluster: %v", s.err)
	}
	return s.c
}

// Clients returns the shared cluster, as Get does, with a Kubernetes client
// of it.
func (s *Shared) Clients(t testing.TB) (*localcluster.Cluster, kubernetes.Interface) {
	t.Helper()
	c := s.Get(t)
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c, cs
}

// Stop stops the shared cluster, if it was started; TestMain calls it.
func (s *Shared) Stop() {
	s.once.Do(func() {}) // no start after this
	if s.c != nil {
		if err := s.c.Stop(); err != nil {
			os.Stderr.WriteString("local cluster: " + err.Error() + "\n")
		}
	}
}

// Main runs a package's tests with a shared cluster and stops it after them:
//
//	var cluster localclustertest.Shared
//	func TestMain(m *testing.M) { os.Exit(cluster.Main(m)) }
func (s *Shared) Main(m *testing.M) int {
	defer s.Stop()
	return m.Run()
}

// logErrors logs the last error lines of the node's log at path (the
// kubelet's E lines, containerd's level=error ones).
func logErrors(t testing.TB, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var errs []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "E") || strings.Contains(l, "level=error") {
			errs = append(errs, l)
		}
	}
	errs = errs[max(0, len(errs)-40):]
	t.Logf("the node's last errors (all output in %s):\n%s", path, strings.Join(errs, "\n"))
}
