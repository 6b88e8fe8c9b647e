package runner

import (
	"fmt"
	"os"
	"syscall"
)

// openJobFile opens a file a job left in its directory for the runner to
// read (its result, its support bundle). The job owns that directory and
// the runner may be root: a symlink, a FIFO or a hard link put there in the
// file's place (to a file only root reads) is refused, not followed.
func openJobFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if err := checkJobFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkJobFile refuses anything but a regular file of one link.
func checkJobFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s)", f.Name(), fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink != 1 {
		return fmt.Errorf("%s: the file has %d links, want 1", f.Name(), st.Nlink)
	}
	return nil
}
