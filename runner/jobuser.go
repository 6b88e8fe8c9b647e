package runner

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/outpost-dev/outpost/protocol"
)

// Jobs under uids of their own (Config.JobUsers; docs/SECURITY.md): a job
// runs as a uid that is not the runner's, so it can read neither the
// runner's memory and environment (/proc/<pid>/environ) nor its token file.
// With a range, each job takes a uid no live process holds, so a daemon a
// job leaves behind (OUTPOST_DAEMON=1) cannot read a later job's directory
// or environment either. The runner must run as root to switch.

// jobUsers hands out the uids jobs run as.
type jobUsers struct {
	first, last uint32
	gid         uint32 // every job's (:GID); 0: each job's uid
	mu          sync.Mutex
	next        uint32
	taken       map[uint32]bool
}

// parseJobUsers reads "UID", "FIRST-LAST", either with ":GID" (default: the
// uid, each job's with a range); its errors name the setting.
func parseJobUsers(s string) (*jobUsers, error) {
	bad := fmt.Errorf("job user %q: want UID, FIRST-LAST or either with :GID (numbers above 0)", s)
	ids, gidText, hasGID := strings.Cut(s, ":")
	firstText, lastText, isRange := strings.Cut(ids, "-")
	if !isRange {
		lastText = firstText
	}
	num := func(t string) (uint32, bool) {
		n, err := strconv.ParseUint(strings.TrimSpace(t), 10, 32)
		return uint32(n), err == nil && n > 0
	}
	first, ok1 := num(firstText)
	last, ok2 := num(lastText)
	var gid uint32
	ok3 := true
	if hasGID {
		gid, ok3 = num(gidText)
	}
	if !ok1 || !ok2 || !ok3 || last < first {
		return nil, bad
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("job user %q: running jobs as another uid needs the runner to run as root", s)
	}
	return &jobUsers{first: first, last: last, gid: gid, next: first, taken: map[uint32]bool{}}, nil
}

// gidOf is the group a job of uid runs with.
func (u *jobUsers) gidOf(uid uint32) uint32 { return cmp.Or(u.gid, uid) }

// isRange says whether each job gets a uid of its own.
func (u *jobUsers) isRange() bool { return u.last > u.first }

// take returns the credential a job runs with. With a range, the uid is
// one no running job and no live process holds.
func (u *jobUsers) take() (*syscall.Credential, error) {
	if !u.isRange() {
		return &syscall.Credential{Uid: u.first, Gid: u.gidOf(u.first), Groups: []uint32{}}, nil
	}
	busy := uidsInUse()
	u.mu.Lock()
	defer u.mu.Unlock()
	for range u.last - u.first + 1 {
		uid := u.next
		if u.next++; u.next > u.last {
			u.next = u.first
		}
		if !u.taken[uid] && !busy[uid] {
			u.taken[uid] = true
			return &syscall.Credential{Uid: uid, Gid: u.gidOf(uid), Groups: []uint32{}}, nil
		}
	}
	return nil, fmt.Errorf("no free job uid in %d-%d: every one runs a job or is held by a process left behind", u.first, u.last)
}

// give returns a job's uid.
func (u *jobUsers) give(c *syscall.Credential) {
	if c == nil || !u.isRange() {
		return
	}
	u.mu.Lock()
	delete(u.taken, c.Uid)
	u.mu.Unlock()
}

// uidsInUse are the uids (real, effective, saved, file system) of every
// live process, from /proc/<pid>/status.
func uidsInUse() map[uint32]bool {
	in := map[uint32]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		f, err := os.Open(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "Uid:"); ok {
				for _, field := range strings.Fields(rest) {
					if n, err := strconv.ParseUint(field, 10, 32); err == nil {
						in[uint32(n)] = true
					}
				}
				break
			}
		}
		f.Close()
	}
	return in
}

// runsAsRunner: job types run under the runner's own uid. A runner_update
// job stages the new binary next to the runner's, and runs only the
// runner's own code (what it stages is switched to only once its signature
// verifies).
func runsAsRunner(typ string) bool { return typ == protocol.JobTypeRunnerUpdate }

// chownJob gives the job's uid its directory and the files the runner wrote
// for it; the log spool stays the runner's.
func chownJob(dir string, c *syscall.Credential, files ...string) error {
	var errs []error
	for _, p := range append([]string{dir, filepath.Join(dir, tmpDir)}, files...) {
		if err := os.Chown(p, int(c.Uid), int(c.Gid)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// keepStateFromJobs makes the customer's state directory the runner's alone
// (0700), though a volume mounted there came more open: a job that wrote
// there could forge a consent or a resume.
func keepStateFromJobs(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	return nil
}

// stickTempDir sets the sticky bit of a world-writable temporary directory
// that lacks it (an emptyDir at /tmp is 0777), so that jobs of other uids
// cannot remove or replace each other's files there; a host's /tmp has it.
func stickTempDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	if m := fi.Mode(); m.Perm()&0o002 == 0 || m&os.ModeSticky != 0 {
		return nil
	}
	if err := os.Chmod(dir, fi.Mode().Perm()|os.ModeSticky); err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	return nil
}

// giveInitCache gives a single job uid the terraform init cache of the work
// directory (with a range it is off: Config.withDefaults).
func (r *Runner) giveInitCache(workDir string) error {
	u := r.cfg.jobUsers
	if u.isRange() || r.cfg.Terraform.NoInitCache {
		return nil
	}
	cache := filepath.Join(workDir, "cache")
	if err := os.MkdirAll(filepath.Join(cache, "terraform-init"), 0o700); err != nil {
		return err
	}
	if err := os.Chmod(cache, 0o711); err != nil {
		return err
	}
	return os.Chown(filepath.Join(cache, "terraform-init"), int(u.first), int(u.gidOf(u.first)))
}
