package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// flakySender stores chunks as the gateway does (each seq once, no gap) but
// fails in the ways a network does: an outage first, then now and then a
// batch that arrives only in part and whose answer is lost, or one the
// gateway acknowledges only in part.
type flakySender struct {
	t        *testing.T
	mu       sync.Mutex
	calls    int
	outage   int // the first calls fail outright
	stored   []protocol.LogChunk
	resends  int // chunks received again after they were stored
	maxBatch int
}

func (s *flakySender) SendLogs(_ context.Context, jobID string, req protocol.LogsRequest) (protocol.LogsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.maxBatch = max(s.maxBatch, len(req.Chunks))
	if jobID != "job-1" || req.Attempt != 3 {
		s.t.Errorf("sent for job %s attempt %d", jobID, req.Attempt)
	}
	if len(req.Chunks) == 0 || len(req.Chunks) > protocol.MaxLogBatchChunks {
		s.t.Errorf("a batch of %d chunks", len(req.Chunks))
	}
	if s.calls <= s.outage {
		return protocol.LogsResponse{}, errors.New("dial tcp: connection refused")
	}
	chunks := req.Chunks
	lostAnswer := s.calls%3 == 0
	if lostAnswer || s.calls%4 == 0 {
		chunks = chunks[:(len(chunks)+1)/2]
	}
	for _, c := range chunks {
		switch stored := int64(len(s.stored)); {
		case c.Seq <= stored:
			s.resends++
		case c.Seq == stored+1:
			s.stored = append(s.stored, c)
		default:
			s.t.Errorf("chunk seq %d after %d: a gap", c.Seq, stored)
		}
	}
	if lostAnswer {
		return protocol.LogsResponse{}, &GatewayError{StatusCode: http.StatusBadGateway}
	}
	return protocol.LogsResponse{AckedSeq: int64(len(s.stored))}, nil
}

func TestShipperDeliversEveryChunkOnceInOrderThroughFailures(t *testing.T) {
	sp, err := createSpool(filepath.Join(t.TempDir(), spoolFile))
	if err != nil {
		t.Fatal(err)
	}
	sender := &flakySender{t: t, outage: 5}
	sh := &shipper{spool: sp, sender: sender, jobID: "job-1", attempt: 3, retry: fastRetry, log: testLogger(t)}

	const before, during = 600, 900 // chunks written before shipping starts, and while it runs
	var want []string
	write := func(n int) {
		for range n {
			stream := protocol.StreamStdout
			if len(want)%7 == 0 {
				stream = protocol.StreamStderr
			}
			data := fmt.Sprintf("line %d\n", len(want)+1)
			if _, err := sp.Append(stream, data); err != nil {
				t.Error(err)
			}
			want = append(want, stream+" "+data)
		}
	}
	write(before)
	shipped := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only a hang guard
	defer cancel()
	go func() { shipped <- sh.run(ctx) }()
	write(during)
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-shipped; err != nil {
		t.Fatalf("shipping: %v", err)
	}

	sender.mu.Lock()
	defer sender.mu.Unlock()
	if len(sender.stored) != len(want) {
		t.Fatalf("%d chunks delivered, want %d", len(sender.stored), len(want))
	}
	for i, c := range sender.stored {
		if c.Seq != int64(i+1) || c.Stream+" "+c.Data != want[i] {
			t.Fatalf("chunk %d is seq %d %q, want seq %d %q", i, c.Seq, c.Stream+" "+c.Data, i+1, want[i])
		}
	}
	if sp.LastSeq() != int64(len(want)) {
		t.Errorf("last seq %d, want %d", sp.LastSeq(), len(want))
	}
	// The failures must have happened, or the test proves nothing.
	if sender.calls <= sender.outage || sender.resends == 0 {
		t.Errorf("%d calls, %d resends: the failures did not happen", sender.calls, sender.resends)
	}
	if sender.maxBatch != protocol.MaxLogBatchChunks {
		t.Errorf("largest batch %d chunks, want the limit %d (%d were waiting)", sender.maxBatch, protocol.MaxLogBatchChunks, before)
	}
}

type staleSender struct{}

func (staleSender) SendLogs(context.Context, string, protocol.LogsRequest) (protocol.LogsResponse, error) {
	return protocol.LogsResponse{}, &GatewayError{StatusCode: http.StatusConflict, Body: protocol.Error{Code: protocol.CodeStaleAttempt}}
}

func TestShipperStopsForAStaleAttempt(t *testing.T) {
	sp, err := createSpool(filepath.Join(t.TempDir(), spoolFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Append(protocol.StreamStdout, "hello\n"); err != nil {
		t.Fatal(err)
	}
	sh := &shipper{spool: sp, sender: staleSender{}, jobID: "job-1", attempt: 1, retry: fastRetry, log: testLogger(t)}
	if err := sh.run(context.Background()); !attemptGone(err) {
		t.Errorf("shipping for a stale attempt ended with %v, want the stale error", err)
	}
}

func TestSpoolRefusesChunksOnceClosed(t *testing.T) {
	sp, err := createSpool(filepath.Join(t.TempDir(), spoolFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Append(protocol.StreamStdout, "late\n"); !errors.Is(err, errSpoolClosed) {
		t.Errorf("append after close: %v", err)
	}
}

// recordingSender acknowledges every batch and hands each one to the test.
type recordingSender struct{ batches chan []protocol.LogChunk }

func (s recordingSender) SendLogs(_ context.Context, _ string, req protocol.LogsRequest) (protocol.LogsResponse, error) {
	s.batches <- req.Chunks
	return protocol.LogsResponse{AckedSeq: req.Chunks[len(req.Chunks)-1].Seq}, nil
}

// While the job runs, lines written between two requests go in one: the
// first line goes at once, a full batch goes at once, the rest waits for
// the batch interval (an hour here) or for the spool to close.
func TestShipperGathersLinesWhileTheJobRuns(t *testing.T) {
	sp, err := createSpool(filepath.Join(t.TempDir(), spoolFile))
	if err != nil {
		t.Fatal(err)
	}
	sender := recordingSender{batches: make(chan []protocol.LogChunk, 10)}
	sh := &shipper{spool: sp, sender: sender, jobID: "job-1", attempt: 1, retry: fastRetry, log: testLogger(t), every: time.Hour}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only a hang guard
	defer cancel()
	shipped := make(chan error, 1)
	go func() { shipped <- sh.run(ctx) }()
	next := func(what string) []protocol.LogChunk {
		t.Helper()
		select {
		case b := <-sender.batches:
			return b
		case err := <-shipped:
			t.Fatalf("shipping ended (%v) before %s was sent", err, what)
		case <-ctx.Done():
			t.Fatalf("%s was not sent", what)
		}
		return nil
	}
	write := func(n int) {
		for range n {
			if _, err := sp.Append(protocol.StreamStdout, "line\n"); err != nil {
				t.Fatal(err)
			}
		}
	}

	write(1)
	if b := next("the first line"); len(b) != 1 || b[0].Seq != 1 {
		t.Fatalf("first request: %d chunks from seq %d, want the first line alone", len(b), b[0].Seq)
	}
	const rest = 44
	write(protocol.MaxLogBatchChunks + rest)
	if b := next("a full batch"); len(b) != protocol.MaxLogBatchChunks || b[0].Seq != 2 {
		t.Fatalf("second request: %d chunks from seq %d, want a full batch of %d from seq 2", len(b), b[0].Seq, protocol.MaxLogBatchChunks)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if b := next("the last lines"); len(b) != rest || b[0].Seq != 2+protocol.MaxLogBatchChunks {
		t.Fatalf("third request: %d chunks from seq %d, want the last %d", len(b), b[0].Seq, rest)
	}
	if err := <-shipped; err != nil {
		t.Fatalf("shipping: %v", err)
	}
	if n := len(sender.batches); n != 0 {
		t.Errorf("%d more requests, want none", n)
	}
}
