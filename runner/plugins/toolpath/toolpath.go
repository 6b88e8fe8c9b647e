package toolpath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// InParents returns the first of dir/rel, parent(dir)/rel, … up to the root
// for which ok is true. dir is made absolute first; an empty dir finds
// nothing.
func InParents(dir, rel string, ok func(path string) bool) (string, bool, error) {
	if dir == "" {
		return "", false, nil
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", false, err
	}
	for {
		if p := filepath.Join(d, rel); ok(p) {
			return p, true, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false, nil
		}
		d = parent
	}
}

// Executable says why path is not an executable file, or nil when it is.
func Executable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("is a directory")
	case fi.Mode()&0o111 == 0:
		return fs.ErrPermission
	}
	return nil
}
