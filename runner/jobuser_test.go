package runner

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// With job users, the work directory is 0711 (jobs reach their own
// directories, list none) and the state directory the runner's alone,
// though it was mounted world-writable (as a volume may come): a job could
// otherwise forge a consent or a resume there.
func TestJobUsersCannotWriteTheRunnersDirectories(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running jobs as another uid needs root")
	}
	work, state := t.TempDir(), worldWritableDir(t, "state")
	prepareWithJobUsers(t, work, state)
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
	tmp := worldWritableDir(t, "tmp")
	t.Setenv("TMPDIR", tmp)
	prepareWithJobUsers(t, t.TempDir(), filepath.Join(t.TempDir(), "state"))
	if fi, err := os.Stat(tmp); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("the temporary directory after the start: %v, %v; want drwxrwxrwt", fi.Mode(), err)
	}
}

// A job owns its directory: in place of its result or its support bundle it
// may leave a symlink, a hard link or a FIFO to what only root (the runner)
// reads. The runner reads and uploads neither, and does not hang on a FIFO.
func TestResultAndBundleAreNotReadThroughALink(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "root-only")
	if err := os.WriteFile(secret, []byte(`{"status":"succeeded","error":"oprn_secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var uploaded atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, _ := io.ReadAll(r.Body); len(b) > 0 {
			uploaded.Add(1)
		}
	}))
	defer srv.Close()
	c := newClient(srv.URL, http.DefaultTransport)
	plant := map[string]func(string) error{
		"symlink":   func(p string) error { return os.Symlink(secret, p) },
		"hard link": func(p string) error { return os.Link(secret, p) },
		"FIFO":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
	}
	for name, plant := range plant {
		dir := t.TempDir()
		if err := plant(filepath.Join(dir, resultFile)); err != nil {
			t.Fatal(err)
		}
		if res, err := ReadResult(dir); err == nil || strings.Contains(res.Error, "oprn_") {
			t.Errorf("a result that is a %s: read %+v, err %v; want it refused", name, res, err)
		}
		bundle := filepath.Join(dir, protocol.SupportBundleFile)
		if err := plant(bundle); err != nil {
			t.Fatal(err)
		}
		if err := c.UploadBundle(context.Background(), "job-1", 1, bundle); err == nil {
			t.Errorf("a support bundle that is a %s: uploaded", name)
		}
	}
	if n := uploaded.Load(); n != 0 {
		t.Errorf("the gateway got %d bundles through links", n)
	}

	dir := t.TempDir() // a file of the job's own is read
	if err := os.WriteFile(filepath.Join(dir, resultFile), []byte(`{"status":"succeeded"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := ReadResult(dir); err != nil || res.Status != protocol.StatusSucceeded {
		t.Errorf("a plain result: %+v, %v", res, err)
	}
}

// worldWritableDir makes a directory name, mode 0777 past the umask, as a
// volume may come.
func worldWritableDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// prepareWithJobUsers prepares the work directory of a runner with a job
// user range, as its start does.
func prepareWithJobUsers(t *testing.T, work, state string) {
	t.Helper()
	r, err := New(Config{GatewayURL: "http://127.0.0.1:1", Token: "oprn_x", WorkDir: work, StateDir: state,
		JobUsers: "100700-100709", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.prepareWorkDir(); err != nil {
		t.Fatal(err)
	}
}
