package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

var errSpoolClosed = errors.New("log spool is closed")

// spool is the log of one job attempt on disk: every chunk gets its sequence
// number and is appended to a file (one JSON protocol.LogChunk a line) before
// anything is sent, and the shipper sends from that file. A gateway outage
// therefore costs no memory and loses no line.
type spool struct {
	// reader is the shipper's, opened with the file: a job that replaces
	// the file's path in its directory cannot point the runner elsewhere.
	reader *os.File

	mu      sync.Mutex
	file    *os.File
	size    int64 // bytes written, always at the end of a line
	lastSeq int64
	closed  bool
	err     error         // the first write error; the spool takes no more after it
	failed  chan struct{} // closed at the first write error
	changed chan struct{} // closed, and replaced, at every change
}

func createSpool(path string) (*spool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating log spool: %w", err)
	}
	r, err := os.Open(path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening log spool: %w", err)
	}
	return &spool{reader: r, file: f, failed: make(chan struct{}), changed: make(chan struct{})}, nil
}

// Append adds one chunk of the given stream and returns its sequence number.
func (s *spool) Append(stream, data string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return 0, errSpoolClosed
	case s.err != nil:
		return 0, s.err
	}
	chunk := protocol.LogChunk{Seq: s.lastSeq + 1, Stream: stream, Data: withoutNUL(data), Time: time.Now().UTC()}
	line, err := json.Marshal(chunk)
	if err != nil {
		return 0, fmt.Errorf("encoding log chunk: %w", err)
	}
	line = append(line, '\n')
	if _, err := s.file.Write(line); err != nil {
		// Drop a partly written line so that the file stays readable.
		_ = s.file.Truncate(s.size)
		s.err = fmt.Errorf("writing log spool: %w", err)
		close(s.failed)
		return 0, s.err
	}
	s.size += int64(len(line))
	s.lastSeq = chunk.Seq
	s.broadcast()
	return chunk.Seq, nil
}

// Close ends the spool: no chunk is added after it.
func (s *spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.broadcast()
	return s.file.Close()
}

// LastSeq is the sequence number of the last chunk appended (0: none).
func (s *spool) LastSeq() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastSeq
}

// Failed is closed at the first write error (Err): the lines after it are
// lost.
func (s *spool) Failed() <-chan struct{} { return s.failed }

// Err is the first write error, if any: the lines after it were lost.
func (s *spool) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// state says how much of the file holds complete chunks, whether more may
// come, and returns a channel closed at the next change.
func (s *spool) state() (size int64, closed bool, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size, s.closed, s.changed
}

func (s *spool) broadcast() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// withoutNUL replaces the NUL characters of a job's output (a binary
// printed) with U+FFFD: the gateway refuses text holding one, as no text
// column stores it.
func withoutNUL(s string) string {
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
