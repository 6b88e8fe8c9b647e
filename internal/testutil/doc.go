// Package testutil holds what the tests of several packages need: a log
// buffer goroutines share, building the project's binaries, and gzipped tar
// archives made to order (including the malformed ones a reader must
// refuse). It is imported only from _test files, and imports nothing of
// the project but internal/syncio (the buffer), so any package's tests may
// use it.
//
// Its subpackage terraformtest finds the terraform binary the way the
// runner does; it is apart because it imports the terraform plugin, whose
// own in-package tests use this package.
package testutil
