package tarball

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// Errors of a Reader, wrapped by what it returns.
var (
	ErrNotGzip    = errors.New("not a gzipped tar archive")
	ErrTruncated  = errors.New("the archive is truncated")
	ErrOutside    = errors.New("paths must stay inside")
	ErrNotRegular = errors.New("only directories and regular files are supported")
)

// Limits bound what a Reader yields, so that a small archive cannot fill a
// disk or memory: at most Files regular files (and as many directories) of
// at most Bytes in all.
type Limits struct {
	Files int
	Bytes int64
	// Root names the archive's root in errors ("the module directory");
	// "the directory" when empty.
	Root string
}

// LimitError is returned when an archive goes past its Limits.
type LimitError struct{ Limits Limits }

func (e *LimitError) Error() string {
	return fmt.Sprintf("more than %d files or %d bytes", e.Limits.Files, e.Limits.Bytes)
}

// EntryError is about one entry of an archive: a path leaving the root
// (ErrOutside) or a link or special file (ErrNotRegular).
type EntryError struct {
	Name string
	Type byte
	Root string
	Err  error
}

func (e *EntryError) Error() string {
	if errors.Is(e.Err, ErrOutside) {
		return fmt.Sprintf("%q: %v %s", e.Name, e.Err, e.Root)
	}
	return fmt.Sprintf("%q: %v (type %q)", e.Name, e.Err, e.Type)
}

func (e *EntryError) Unwrap() error { return e.Err }

// Reader reads the directories and regular files of a gzipped tar archive,
// like tar.Reader, checking each entry and the Limits.
type Reader struct {
	tr     *tar.Reader
	lim    Limits
	name   string
	files  int
	dirs   int
	total  int64
	closer io.Closer
}

// NewReader starts reading the gzipped tar archive r.
func NewReader(r io.Reader, lim Limits) (*Reader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotGzip, err)
	}
	if lim.Root == "" {
		lim.Root = "the directory"
	}
	return &Reader{tr: tar.NewReader(zr), lim: lim, closer: zr}, nil
}

// Next advances to the next directory or regular file and returns its path,
// cleaned and relative to the archive's root ("./a/../b" is "b"), and its
// header. It returns io.EOF at the end of the archive; anything but a
// directory or a regular file, a path leaving the root, an archive past
// the Limits or one cut short is an error.
func (r *Reader) Next() (string, *tar.Header, error) {
	for {
		hdr, err := r.tr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return "", nil, io.EOF
		case err != nil:
			return "", nil, r.readErr(err)
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		switch {
		case hdr.Typeflag == tar.TypeXGlobalHeader || (name == "." && hdr.Typeflag == tar.TypeDir):
			continue
		case path.IsAbs(name) || name == "." || name == ".." || strings.HasPrefix(name, "../"):
			return "", nil, &EntryError{Name: hdr.Name, Type: hdr.Typeflag, Root: r.lim.Root, Err: ErrOutside}
		case hdr.Typeflag == tar.TypeDir:
			r.dirs++
		case hdr.Typeflag == tar.TypeReg:
			r.files++
			r.total += hdr.Size
		default:
			return "", nil, &EntryError{Name: hdr.Name, Type: hdr.Typeflag, Root: r.lim.Root, Err: ErrNotRegular}
		}
		if r.files > r.lim.Files || r.dirs > r.lim.Files || hdr.Size < 0 || r.total > r.lim.Bytes {
			return "", nil, &LimitError{Limits: r.lim}
		}
		r.name = name
		return name, hdr, nil
	}
}

// Read reads the current file's contents.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.tr.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("%s: %w", r.name, r.readErr(err))
	}
	return n, err
}

// Close releases the gzip reader; it does not close the underlying reader.
func (r *Reader) Close() error { return r.closer.Close() }

// readErr names a stream cut short as such.
func (r *Reader) readErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", ErrTruncated, err)
	}
	return fmt.Errorf("reading the archive: %w", err)
}
