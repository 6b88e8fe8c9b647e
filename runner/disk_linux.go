package runner

import (
	"fmt"
	"syscall"
)

// fullDisk says, when the file system holding dir has less than a MiB
// left, that the runner's work disk is full ("" otherwise): the reason a job
// process ended without a result when it could not write one.
func fullDisk(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return ""
	}
	if free := st.Bavail * uint64(st.Bsize); free < 1<<20 {
		return fmt.Sprintf("the runner's work disk is full (%d bytes free at %s)", free, dir)
	}
	return ""
}
