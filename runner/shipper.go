package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// maxLogBatchBytes bounds the log data in one request (with at least one
// chunk in each), besides protocol.MaxLogBatchChunks.
const maxLogBatchBytes = 1 << 20

// LogSender delivers log chunks of one job attempt, in order. The answer's
// AckedSeq says up to which chunk the gateway holds them all.
type LogSender interface {
	SendLogs(ctx context.Context, jobID string, req protocol.LogsRequest) (protocol.LogsResponse, error)
}

// shipper sends a spool to the gateway: in order, in batches, resending what
// was not acknowledged after a failure (the gateway stores each sequence
// number once, so a resend never duplicates a line).
type shipper struct {
	spool   *spool
	sender  LogSender
	jobID   string
	attempt int
	retry   retryPolicy
	log     *slog.Logger
	// every is the least time between two requests while the job runs (Intervals.LogBatch); the
	// first lines go at once, and so do the last once the spool is closed.
	every time.Duration
}

// run ships until the spool is closed and the gateway has acknowledged all of
// it. It stops early, with an error, when ctx ends or on an answer that a
// retry cannot change (see permanent; attemptGone tells a stale attempt).
func (sh *shipper) run(ctx context.Context) error {
	f := sh.spool.reader
	defer f.Close()

	var (
		read    int64               // how far the file has been read
		pending []protocol.LogChunk // read, not yet acknowledged
		b       = sh.retry.backoff()
		failing bool
		sent    time.Time // when the last request that went through was sent
		err     error
	)
	for {
		size, closed, changed := sh.spool.state()
		if len(pending) < protocol.MaxLogBatchChunks && read < size {
			if pending, read, err = readChunks(f, read, size, pending); err != nil {
				return err
			}
		}
		if wait := sh.every - time.Since(sent); len(pending) > 0 && !closed && !failing && wait > 0 && batchLen(pending) == len(pending) &&
			len(pending) < protocol.MaxLogBatchChunks {
			// Gather until the batch is due, full, or the spool closed.
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-changed:
			case <-ctx.Done():
			}
			t.Stop()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		if len(pending) == 0 {
			if closed && read == size {
				return nil
			}
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}

		batch := pending[:batchLen(pending)]
		at := time.Now()
		resp, err := sh.sender.SendLogs(ctx, sh.jobID, protocol.LogsRequest{Attempt: sh.attempt, Chunks: batch})
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && permanent(err):
			return fmt.Errorf("sending logs: %w", err)
		case err == nil && resp.AckedSeq >= batch[0].Seq:
			if failing {
				sh.log.Info("sending logs again")
			}
			failing, sent = false, at
			b.reset()
			for len(pending) > 0 && pending[0].Seq <= resp.AckedSeq {
				pending = pending[1:]
			}
			continue
		case err == nil:
			err = fmt.Errorf("gateway acknowledged up to seq %d, short of %d", resp.AckedSeq, batch[0].Seq)
		}
		wait := b.next()
		if !failing {
			sh.log.Warn("sending logs failed, they are kept in the spool and retried", "err", err, "retry_in", wait.Round(time.Millisecond))
		}
		failing = true
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// readChunks appends the chunks of f between from and to (both at line ends)
// to pending, up to protocol.MaxLogBatchChunks, and returns how far it read.
func readChunks(f *os.File, from, to int64, pending []protocol.LogChunk) ([]protocol.LogChunk, int64, error) {
	r := bufio.NewReader(io.NewSectionReader(f, from, to-from))
	for len(pending) < protocol.MaxLogBatchChunks {
		line, err := r.ReadBytes('\n')
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil {
			return pending, from, fmt.Errorf("reading log spool at byte %d: %w", from, err)
		}
		var c protocol.LogChunk
		if err := json.Unmarshal(line, &c); err != nil {
			return pending, from, fmt.Errorf("reading log spool at byte %d: %w", from, err)
		}
		pending = append(pending, c)
		from += int64(len(line))
	}
	return pending, from, nil
}

// batchLen is how many of the chunks go in the next request.
func batchLen(chunks []protocol.LogChunk) int {
	n, bytes := 0, 0
	for n < len(chunks) && n < protocol.MaxLogBatchChunks {
		bytes += len(chunks[n].Data)
		if n > 0 && bytes > maxLogBatchBytes {
			break
		}
		n++
	}
	return n
}
