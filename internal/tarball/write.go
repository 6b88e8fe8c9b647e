package tarball

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
)

// Format chooses a Writer's header format and compression. Both are part
// of the bytes, so a caller whose archives are digested keeps its own.
type Format struct {
	// Tar is the header format (tar.FormatUnknown lets archive/tar choose).
	Tar tar.Format
	// Level is the gzip level (0 is gzip.DefaultCompression).
	Level int
}

// Writer writes a gzipped tar archive whose headers hold only a name, a
// type, a size and a mode: no times, no owners.
type Writer struct {
	zw     *gzip.Writer
	tw     *tar.Writer
	format tar.Format
}

// NewWriter writes the archive to w; tee, when not nil, gets a copy of the
// uncompressed tar stream (to digest it).
func NewWriter(w io.Writer, f Format, tee io.Writer) (*Writer, error) {
	level := f.Level
	if level == 0 {
		level = gzip.DefaultCompression
	}
	zw, err := gzip.NewWriterLevel(w, level)
	if err != nil {
		return nil, err
	}
	var out io.Writer = zw
	if tee != nil {
		out = io.MultiWriter(zw, tee)
	}
	return &Writer{zw: zw, tw: tar.NewWriter(out), format: f.Tar}, nil
}

// Dir adds a directory entry, name as given ("a/").
func (w *Writer) Dir(name string, mode int64) error {
	return w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Format: w.format})
}

// File adds a regular file of size bytes read from r.
func (w *Writer) File(name string, mode, size int64, r io.Reader) error {
	if err := w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: size, Format: w.format}); err != nil {
		return err
	}
	_, err := io.Copy(w.tw, r)
	return err
}

// Close ends the tar stream and the gzip stream; it does not close the
// underlying writer.
func (w *Writer) Close() error {
	return errors.Join(w.tw.Close(), w.zw.Close())
}

// Tree says how AddFS writes a directory tree.
type Tree struct {
	// Prefix is joined before every name ("chart" gives "chart/values.yaml").
	Prefix string
	// Dirs adds an entry for each directory ("a/"), not only files.
	Dirs bool
	// Skip, when not nil, leaves out a file or a whole directory.
	Skip func(name string, dir bool) bool
}

// AddFS adds the files of fsys in lexical order, each 0755 when it has an
// executable bit and 0644 otherwise (directories 0755). A symlink or other
// special file is an error.
func (w *Writer) AddFS(fsys fs.FS, t Tree) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == ".":
			return nil
		case t.Skip != nil && t.Skip(p, d.IsDir()):
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case d.IsDir():
			if !t.Dirs {
				return nil
			}
			return w.Dir(path.Join(t.Prefix, p)+"/", 0o755)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: only regular files and directories can be archived (not a %s)", p, d.Type())
		}
		return w.addFile(fsys, p, path.Join(t.Prefix, p))
	})
}

func (w *Writer) addFile(fsys fs.FS, p, name string) error {
	info, err := fs.Stat(fsys, p)
	if err != nil {
		return err
	}
	f, err := fsys.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	mode := int64(0o644)
	if info.Mode()&0o111 != 0 {
		mode = 0o755
	}
	return w.File(name, mode, info.Size(), f)
}
