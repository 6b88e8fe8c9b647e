package runner

import (
	"cmp"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// With job users, the work directory is 0711 (jobs reach their own
// directories, list none) and the state directory the runner's alone,
// though it was mounted world-writable (as a volume may come): a job could
// otherwise forge a consent or a resume there.
func TestJobUsersCannotWriteTheRunnersDirectories(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running jobs as another uid needs root")
	}
	work, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(state, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	r, err := New(Config{GatewayURL: "http://127.0.0.1:1", Token: "oprn_x", WorkDir: work, StateDir: state,
		JobUsers: "100700-100709", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.prepareWorkDir(); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]os.FileMode{work: 0o711, filepath.Join(work, "jobs"): 0o711, state: 0o700} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", dir, got, want)
		}
	}
}

// With a range and no :GID each job runs with a group of its own (its uid),
// so no job reads another's group-readable files; a :GID is every job's.
func TestJobUsersOfARangeHaveGroupsOfTheirOwn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running jobs as another uid needs root")
	}
	for spec, gid := range map[string]uint32{"100700-100709": 0, "100700-100709:5000": 5000, "100700": 100700} {
		u, err := parseJobUsers(spec)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second job's uid is not the first uid, the old default gid
			c, err := u.take()
			if err != nil {
				t.Fatal(err)
			}
			if want := cmp.Or(gid, c.Uid); c.Gid != want {
				t.Errorf("%s: a job of uid %d got gid %d, want %d", spec, c.Uid, c.Gid, want)
			}
		}
	}
}

// With job users the runner gives a world-writable temporary directory
// without the sticky bit (an emptyDir at /tmp) the bit, so jobs of other
// uids cannot remove or replace each other's files there.
func TestJobUsersGetAStickyTempDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running jobs as another uid needs root")
	}
	tmp := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	r, err := New(Config{GatewayURL: "http://127.0.0.1:1", Token: "oprn_x", WorkDir: t.TempDir(), StateDir: filepath.Join(t.TempDir(), "state"),
		JobUsers: "100700-100709", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.prepareWorkDir(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(tmp); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("the temporary directory after the start: %v, %v; want drwxrwxrwt", fi.Mode(), err)
	}
}
