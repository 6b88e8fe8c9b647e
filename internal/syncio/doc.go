// Package syncio holds writers that goroutines may share: a Writer that
// serialises writes into another writer (the streams of several processes
// into one log), and a Buffer that keeps what was written (a log a test
// reads while it is written). It imports nothing of the project, so both
// the runner and the tests may use it.
package syncio
