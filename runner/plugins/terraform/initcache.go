package terraform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/internal/filecopy"
)

// EnvInitCache names, in a job's environment, the directory of the runner's
// init cache (the runner sets it to <work dir>/cache/terraform-init unless
// started with --terraform-init-cache=false). Without it every job runs
// terraform init.
const EnvInitCache = "OUTPOST_TERRAFORM_INIT_CACHE"

// initCacheTTL is how long an init is reused: it resolved the module's open versions against its
// registries then, and a working directory kept by hand is re-initialised now and then too.
const initCacheTTL = time.Hour

// initCacheWait bounds how long a job waits for another's init of the same
// module (the other may be a job preparing at a lower CPU priority): after
// it, the job runs its own init and keeps nothing.
const initCacheWait = 10 * time.Second

// initCacheFormat is part of every key: changing what an entry holds, or how
// terraform is initialised, starts the cache afresh.
const initCacheFormat = "outpost-terraform-init-1"

// What terraform init leaves in the module's directory, which an entry
// holds: the working directory's data (the backend's configuration, installed
// providers and modules) and the dependency lock file.
const (
	dataDir  = ".terraform"
	lockFile = ".terraform.lock.hcl"
)

// initCache keeps what terraform init left in a module's directory, per initCacheKey,
// for later jobs of the runner to copy instead of running init; an entry is made under
// a file lock, so jobs that start together wait for one init (see the package doc).
type initCache struct {
	dir string
	now func() time.Time
}

// initCacheKey is the key of a module's init: the archive's bytes, the
// terraform binary (path, size, modification time), the CLI configuration's
// content and the TF_* environment (but TF_HTTP_*, the backend's per-job
// settings, and TF_LOG*), hashed.
func initCacheKey(module []byte, bin, cliConfig string, env map[string]string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", initCacheFormat)
	sum := sha256.Sum256(module)
	fmt.Fprintf(h, "module %x\n", sum)
	fi, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "terraform %s %d %d\n", bin, fi.Size(), fi.ModTime().UnixNano())
	cfg, err := os.ReadFile(cliConfig)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "cli config %d\n", len(cfg))
	h.Write(cfg)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !strings.HasPrefix(k, "TF_") || strings.HasPrefix(k, "TF_HTTP_") || strings.HasPrefix(k, "TF_LOG") || k == envCLIConfig {
			continue
		}
		fmt.Fprintf(h, "env %s=%d\n%s\n", k, len(env[k]), env[k])
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// initialise gives moduleDir what terraform init leaves there: a copy of the
// entry of key when there is one younger than initCacheTTL (reused is its
// age), else what runInit makes, which is then kept as the entry. Failing to
// read or keep an entry is reported through warn and costs only the reuse.
func (c initCache) initialise(ctx context.Context, key, moduleDir string, runInit func() error, warn func(error)) (reused time.Duration, ok bool, err error) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		warn(err)
		return 0, false, runInit()
	}
	lctx, cancel := context.WithTimeout(ctx, initCacheWait)
	unlock, err := flock(lctx, filepath.Join(c.dir, key+".lock"))
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return 0, false, ctx.Err()
		}
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			warn(fmt.Errorf("waited %s for another job's init of this module: running init", initCacheWait))
		case !errors.Is(err, errors.ErrUnsupported):
			warn(fmt.Errorf("locking the entry: %w", err))
		}
		return 0, false, runInit()
	}
	defer unlock()

	entry := filepath.Join(c.dir, key)
	if fi, err := os.Stat(entry); err == nil && c.now().Sub(fi.ModTime()) < initCacheTTL {
		err := copyInit(entry, moduleDir)
		if err == nil {
			return max(c.now().Sub(fi.ModTime()), 0), true, nil
		}
		warn(err)
		if err := clearInit(moduleDir); err != nil {
			return 0, false, err
		}
	}
	if err := runInit(); err != nil {
		return 0, false, err
	}
	if err := c.keep(moduleDir, entry); err != nil {
		warn(err)
	}
	c.prune(warn)
	return 0, false, nil
}

// prune removes the entries too old to be reused, so that the cache holds
// at most an hour's inits. An entry whose lock another job holds (it may be
// copying the entry) is left for a later prune; lock files, empty, stay.
func (c initCache) prune(warn func(error)) {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		warn(err)
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		fi, err := e.Info()
		switch {
		case err != nil || c.now().Sub(fi.ModTime()) < initCacheTTL:
		case strings.HasPrefix(e.Name(), "new-"): // left by a job that died while keeping its init
			err = os.RemoveAll(filepath.Join(c.dir, e.Name()))
		default:
			err = c.removeUnlocked(e.Name())
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			warn(err)
		}
	}
}

// removeUnlocked removes the entry key unless another job holds its lock.
func (c initCache) removeUnlocked(key string) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one try, no wait
	unlock, err := flock(ctx, filepath.Join(c.dir, key+".lock"))
	if err != nil {
		return nil // held, or locks unsupported: left for later
	}
	defer unlock()
	return os.RemoveAll(filepath.Join(c.dir, key))
}

// keep makes what init left in moduleDir the entry: copied to a temporary
// directory, then renamed into place, so an entry is never seen half made.
func (c initCache) keep(moduleDir, entry string) error {
	tmp, err := os.MkdirTemp(c.dir, "new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyInit(moduleDir, tmp); err != nil {
		return err
	}
	if err := os.RemoveAll(entry); err != nil {
		return err
	}
	return os.Rename(tmp, entry)
}

// copyInit copies the data directory and the lock file (when there is one)
// from one module directory to another. The lock file is replaced whole
// (written beside it, then renamed), so a failed copy leaves the one the
// module's archive brought, if any.
func copyInit(from, to string) error {
	if err := copyTree(filepath.Join(from, dataDir), filepath.Join(to, dataDir)); err != nil {
		return fmt.Errorf("copying %s: %w", dataDir, err)
	}
	tmp := filepath.Join(to, lockFile+".outpost-new")
	switch err := filecopy.File(filepath.Join(from, lockFile), tmp, 0o644); {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		os.Remove(tmp)
		return fmt.Errorf("copying %s: %w", lockFile, err)
	}
	if err := os.Rename(tmp, filepath.Join(to, lockFile)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copying %s: %w", lockFile, err)
	}
	return nil
}

// clearInit removes a partly copied data directory, so that init starts
// from the module as its archive brought it.
func clearInit(moduleDir string) error {
	return os.RemoveAll(filepath.Join(moduleDir, dataDir))
}

// linkAbove is the size from which a provider's file is hard-linked rather than copied (binaries
// terraform only executes); all else is copied, so nothing a job writes reaches an entry.
const linkAbove = 1 << 20

// copyTree copies the directory from to to (which must not exist): files,
// directories and symbolic links (terraform links providers from a plugin
// cache directory).
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if fi.Size() >= linkAbove && strings.HasPrefix(filepath.ToSlash(rel), "providers/") && os.Link(path, dst) == nil {
				return nil
			}
			return filecopy.File(path, dst, fi.Mode().Perm())
		default:
			return fmt.Errorf("%s: not a file, directory or symbolic link", path)
		}
	})
}
