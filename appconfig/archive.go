package appconfig

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"testing/fstest"

	"github.com/outpost-dev/outpost/appconfig/configarchive"
	"github.com/outpost-dev/outpost/internal/tarball"
)

// Archive limits: a config archive holds at most MaxArchiveFiles files of
// at most MaxArchiveBytes in all, uncompressed.
const (
	MaxArchiveFiles = 5000
	MaxArchiveBytes = 64 << 20
)

// ArchiveDir packs the directory dir of fsys ("." for all of it) as a
// gzipped tar whose bytes depend only on the files' paths, contents and
// executable bits: entries in lexical order, paths relative to dir, times
// zeroed, no owners, modes 0755 (directories, executables) or 0644, a gzip
// header without name or time. Files and directories that skipped names
// (.terraform/, .git/, *.tfstate) are left out; a symlink or other special
// file is an error.
func ArchiveDir(fsys fs.FS, dir string) ([]byte, error) {
	return archiveDir(fsys, dir, nil)
}

// archiveDir is ArchiveDir; the uncompressed tar stream is also written to
// tarCopy, when it is not nil.
func archiveDir(fsys fs.FS, dir string, tarCopy io.Writer) ([]byte, error) {
	return configarchive.Pack(fsys, dir, tarCopy)
}

// ErrArchive is wrapped by the errors of ReadArchive and FileSet about the
// files themselves (not gzip, not tar, unsafe paths, too large); ErrTooLarge,
// which wraps ErrArchive too, by those about going past MaxArchiveFiles or
// MaxArchiveBytes.
var (
	ErrArchive  = errors.New("bad config archive")
	ErrTooLarge = fmt.Errorf("%w: too large", ErrArchive)
)

// ReadArchive reads a gzipped tar of a config directory into memory: each
// regular file goes through a FileSet, directories are implied, links and
// special files are errors.
func ReadArchive(r io.Reader) (fs.FS, error) {
	tr, err := tarball.NewReader(r, tarball.Limits{Files: MaxArchiveFiles, Bytes: MaxArchiveBytes})
	if err != nil {
		return nil, fmt.Errorf("%w: not gzip data: %w", ErrArchive, err)
	}
	defer tr.Close()
	var set FileSet
	for {
		name, h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, archiveErr(err)
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrArchive, err)
		}
		if err := set.Add(name, data, fs.FileMode(h.Mode)); err != nil {
			return nil, err
		}
	}
	return set.FS()
}

// archiveErr wraps an error of a tarball.Reader in ErrArchive, or in
// ErrTooLarge when the archive went past the limits.
func archiveErr(err error) error {
	var entry *tarball.EntryError
	var limit *tarball.LimitError
	switch {
	case errors.As(err, &limit):
		return fmt.Errorf("%w: more than %d files or %d bytes uncompressed", ErrTooLarge, MaxArchiveFiles, MaxArchiveBytes)
	case errors.As(err, &entry) && errors.Is(err, tarball.ErrOutside):
		return fmt.Errorf("%w: %q is not a path inside the config", ErrArchive, entry.Name)
	}
	return fmt.Errorf("%w: %w", ErrArchive, err)
}

// FileSet collects the files of a config one by one (from a tar archive, a
// multipart form…), checking each path.
type FileSet struct {
	files fstest.MapFS
	total int64
}

// Add adds a file by its path relative to the config's root ("./x" is "x").
// Skipped files (see ArchiveDir) are dropped; absolute paths, paths leaving
// the root, a path given twice and going past MaxArchiveFiles or
// MaxArchiveBytes are errors wrapping ErrArchive.
func (s *FileSet) Add(name string, data []byte, mode fs.FileMode) error {
	clean := path.Clean(strings.TrimPrefix(name, "./"))
	if name == "" || path.IsAbs(name) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || !fs.ValidPath(clean) {
		return fmt.Errorf("%w: %q is not a path inside the config", ErrArchive, name)
	}
	if skippedPath(clean) {
		return nil
	}
	if s.files == nil {
		s.files = fstest.MapFS{}
	}
	if _, dup := s.files[clean]; dup {
		return fmt.Errorf("%w: %s is given twice", ErrArchive, clean)
	}
	if len(s.files) >= MaxArchiveFiles {
		return fmt.Errorf("%w: more than %d files", ErrTooLarge, MaxArchiveFiles)
	}
	s.total += int64(len(data))
	if s.total > MaxArchiveBytes {
		return fmt.Errorf("%w: more than %d bytes uncompressed", ErrTooLarge, MaxArchiveBytes)
	}
	s.files[clean] = &fstest.MapFile{Data: data, Mode: mode & 0o777}
	return nil
}

// FS returns the files as a directory. When they sit in a single top-level
// directory with the config file in it ("demo-app/outpost.toml"), that
// directory is the root.
func (s *FileSet) FS() (fs.FS, error) {
	if len(s.files) == 0 {
		return nil, fmt.Errorf("%w: no files", ErrArchive)
	}
	return stripTopDir(s.files), nil
}

// skippedPath reports whether a path, or a directory on it, is skipped.
func skippedPath(p string) bool {
	parts := strings.Split(p, "/")
	for i := range parts[:len(parts)-1] {
		if configarchive.Skipped(strings.Join(parts[:i+1], "/"), true) {
			return true
		}
	}
	return configarchive.Skipped(p, false)
}

// stripTopDir makes a single top-level directory the root when the config
// file is in it rather than at the root.
func stripTopDir(files fstest.MapFS) fs.FS {
	if _, ok := files[ConfigFile]; ok {
		return files
	}
	top := ""
	for name := range files {
		first, _, nested := strings.Cut(name, "/")
		if !nested || (top != "" && first != top) {
			return files
		}
		top = first
	}
	if _, ok := files[top+"/"+ConfigFile]; !ok {
		return files
	}
	out := fstest.MapFS{}
	for name, f := range files {
		out[strings.TrimPrefix(name, top+"/")] = f
	}
	return out
}

// FromArchive reads and validates a config archive (ReadArchive, then
// Load): how the control plane gets the config of a stored version.
func FromArchive(data []byte) (*Config, error) {
	fsys, err := ReadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return Load(fsys)
}

// Archive packs the whole config as ArchiveDir does: the form in which a
// version is stored.
func (c *Config) Archive() ([]byte, error) {
	return ArchiveDir(c.fsys, ".")
}
