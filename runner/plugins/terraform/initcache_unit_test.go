package terraform

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Only providers' large files are hard-linked into a job's directory:
// installed modules' sources, which a module may rewrite, are copied.
func TestCopyInitLinksOnlyProviders(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	big := strings.Repeat("x", linkAbove)
	writeFile(t, filepath.Join(from, dataDir, "providers", "registry.terraform.io", "acme", "p", "terraform-provider-p"), big)
	writeFile(t, filepath.Join(from, dataDir, "modules", "m", "data.bin"), big)
	writeFile(t, filepath.Join(from, dataDir, "terraform.tfstate"), "{}")
	writeFile(t, filepath.Join(from, lockFile), "lock")
	if err := copyInit(from, to); err != nil {
		t.Fatal(err)
	}
	same := func(rel string) bool {
		a, err1 := os.Stat(filepath.Join(from, rel))
		b, err2 := os.Stat(filepath.Join(to, rel))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", rel, err1, err2)
		}
		return os.SameFile(a, b)
	}
	if !same(filepath.Join(dataDir, "providers", "registry.terraform.io", "acme", "p", "terraform-provider-p")) {
		t.Error("a provider binary was copied, want it hard-linked")
	}
	if same(filepath.Join(dataDir, "modules", "m", "data.bin")) || same(filepath.Join(dataDir, "terraform.tfstate")) || same(lockFile) {
		t.Error("a module's file, the backend's configuration or the lock file was hard-linked, want them copied")
	}
}

// A cached init that cannot be copied costs only the reuse: the job runs
// init, on its module as the archive brought it (its own lock file kept).
func TestFailedReuseRunsInitOnTheModuleAsItCame(t *testing.T) {
	c := initCache{dir: t.TempDir(), now: time.Now}
	const key = "k"
	writeFile(t, filepath.Join(c.dir, key, dataDir, "terraform.tfstate"), "cached")
	writeFile(t, filepath.Join(c.dir, key, lockFile), "cached lock")
	module := t.TempDir()
	writeFile(t, filepath.Join(module, lockFile), "the archive's lock")
	// A data directory already there makes the copy fail.
	writeFile(t, filepath.Join(module, dataDir, "stray"), "")
	var warned []error
	ran := false
	_, reused, err := c.initialise(context.Background(), key, module, func() error {
		ran = true
		if b, err := os.ReadFile(filepath.Join(module, lockFile)); err != nil || string(b) != "the archive's lock" {
			t.Errorf("init found the lock file %q (%v), want the archive's", b, err)
		}
		if _, err := os.Stat(filepath.Join(module, dataDir)); err == nil {
			t.Error("init found a partly copied data directory")
		}
		writeFile(t, filepath.Join(module, dataDir, "terraform.tfstate"), "fresh")
		return nil
	}, func(err error) { warned = append(warned, err) })
	if err != nil || reused || !ran || len(warned) == 0 {
		t.Fatalf("initialise: err %v, reused %v, init ran %v, warnings %v: want init run after a warning", err, reused, ran, warned)
	}
}

// An expired entry another job holds (it may be copying it) is not pruned.
func TestPruneLeavesALockedEntry(t *testing.T) {
	now := time.Now()
	c := initCache{dir: t.TempDir(), now: func() time.Time { return now }}
	writeFile(t, filepath.Join(c.dir, "old", dataDir, "terraform.tfstate"), "{}")
	old := now.Add(-2 * initCacheTTL)
	if err := os.Chtimes(filepath.Join(c.dir, "old"), old, old); err != nil {
		t.Fatal(err)
	}
	unlock, err := flock(context.Background(), filepath.Join(c.dir, "old.lock"))
	if err != nil {
		t.Fatal(err)
	}
	fail := func(err error) { t.Errorf("prune: %v", err) }
	c.prune(fail)
	if _, err := os.Stat(filepath.Join(c.dir, "old")); err != nil {
		t.Fatalf("a held entry was pruned: %v", err)
	}
	unlock()
	c.prune(fail)
	if _, err := os.Stat(filepath.Join(c.dir, "old")); err == nil {
		t.Fatal("an expired entry nobody holds was not pruned")
	}
}
