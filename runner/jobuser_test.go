package runner

import (
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
