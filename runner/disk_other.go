//go:build !linux

package runner

// fullDisk: only Linux looks at the free space of the work disk.
func fullDisk(string) string { return "" }
