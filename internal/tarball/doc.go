// Package tarball reads and writes the gzipped tar archives that carry
// source directories: a config version, a terraform module, a chart.
//
// Reading is safe against archives made to harm: a Reader yields only
// directories and regular files at clean paths inside the archive's root
// (no absolute paths, no "..", no links, devices or fifos), stops at a
// number of files and a number of bytes, and names a truncated stream as
// such. Extract writes what a Reader yields into a directory.
//
// Writing is deterministic: a Writer gives every entry a zero time, no
// owners and a mode of 0755 or 0644, and AddFS writes a directory tree in
// lexical order, so that the same files give the same bytes. The digest of
// those bytes is a build's key, so the header format and gzip level are
// the caller's choice and never change under it.
//
// The runner imports this package: it links nothing of the control plane.
package tarball
