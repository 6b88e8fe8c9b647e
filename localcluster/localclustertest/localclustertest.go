package localclustertest

import (
	"os"
	"sync"
	"testing"

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
