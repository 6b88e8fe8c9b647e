package appconfig

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"testing/fstest"
)

// Archive limits: a config archive holds at most MaxArchiveFiles files of
// at most MaxArchiveBytes in all, uncompressed.
const (
	MaxArchiveFiles = 5000
	MaxArchiveBytes = 64 << 20
)

// skipped reports whether a file or directory is left out of archives:
// terraform's working data and state, VCS data, macOS metadata.
func skipped(name string, dir bool) bool {
	base := path.Base(name)
	if dir {
		return base == ".terraform" || base == ".git" || base == "__MACOSX"
	}
	return strings.HasPrefix(base, "._") || base == ".DS_Store" ||
		strings.HasSuffix(base, ".tfstate") || strings.HasSuffix(base, ".tfstate.backup")
}

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
	if dir != "." {
		sub, err := fs.Sub(fsys, dir)
		if err != nil {
			return nil, fmt.Errorf("appconfig: archive %s: %w", dir, err)
		}
		fsys = sub
	}
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	var tarOut io.Writer = gz
	if tarCopy != nil {
		tarOut = io.MultiWriter(gz, tarCopy)
	}
	tw := tar.NewWriter(tarOut)
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if skipped(p, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: 0o755, Format: tar.FormatPAX})
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: only regular files and directories can be archived (not a %s)", p, d.Type())
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(data)), Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("appconfig: archive %s: %w", dir, err)
	}
	return buf.Bytes(), nil
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
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: not gzip data: %w", ErrArchive, err)
	}
	tr := tar.NewReader(gz)
	var set FileSet
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: not a tar archive: %w", ErrArchive, err)
		}
		switch h.Typeflag {
		case tar.TypeXGlobalHeader, tar.TypeDir:
			continue
		case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // TypeRegA: old tars
		default:
			return nil, fmt.Errorf("%w: %s: only regular files and directories are supported (links and special files are not)", ErrArchive, h.Name)
		}
		if h.Size > MaxArchiveBytes {
			return nil, fmt.Errorf("%w: more than %d bytes uncompressed", ErrTooLarge, MaxArchiveBytes)
		}
		data, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrArchive, h.Name, err)
		}
		if err := set.Add(h.Name, data, fs.FileMode(h.Mode)); err != nil {
			return nil, err
		}
	}
	return set.FS()
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
		if skipped(strings.Join(parts[:i+1], "/"), true) {
			return true
		}
	}
	return skipped(p, false)
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
