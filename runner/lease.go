package runner

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// lease is what the supervisor learns from the job heartbeats.
type lease struct {
	renewed chan struct{} // a renewal happened (buffered: one is enough)
	cancel  chan struct{} // closed when the gateway asks to cancel the job
	lost    chan struct{} // closed when the attempt is no longer this runner's
	// inputs receives a deferred job's inputs, once (buffered).
	inputs chan json.RawMessage

	mu   sync.Mutex
	last time.Time // when the last successful renewal was sent
}

func (l *lease) lastRenewal() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

func (l *lease) isLost() bool {
	select {
	case <-l.lost:
		return true
	default:
		return false
	}
}

func (l *lease) renew(at time.Time) {
	l.mu.Lock()
	l.last = at
	l.mu.Unlock()
	select {
	case l.renewed <- struct{}{}:
	default:
	}
}

// keepLease renews the job's lease until ctx ends or the attempt is gone.
func (s *supervisor) keepLease(ctx context.Context) *lease {
	l := &lease{
		renewed: make(chan struct{}, 1),
		cancel:  make(chan struct{}),
		lost:    make(chan struct{}),
		inputs:  make(chan json.RawMessage, 1),
		last:    s.claimedAt,
	}
	go s.renewLease(ctx, l)
	return l
}

// renewLease sends held job heartbeats one after the other (see docs/architecture/jobs.md, "Gateway"),
// passing deferred inputs to l.inputs; it retries failures with backoff until the supervisor gives up.
func (s *supervisor) renewLease(ctx context.Context, l *lease) {
	every := s.intervals.JobHeartbeat()
	b := retryPolicy{base: s.retry.base, max: min(s.retry.max, every)}.backoff()
	var failing, cancelled bool
	wantInputs := s.job.InputsDeferred
	for {
		sent := time.Now()
		resp, err := s.gw.JobHeartbeat(ctx, s.job.ID, protocol.JobHeartbeatRequest{
			Attempt:    s.job.Attempt,
			WaitMS:     every.Milliseconds(),
			WantInputs: wantInputs,
		})
		switch {
		case ctx.Err() != nil:
			return
		case attemptGone(err):
			close(l.lost)
			return
		case err != nil:
			if !failing {
				s.log.Warn("renewing the job's lease failed, retrying", "err", err)
			}
			failing = true
			if sleep(ctx, b.next()) != nil {
				return
			}
			continue
		}
		if failing {
			s.log.Info("the job's lease is renewed again")
		}
		failing = false
		b.reset()
		// The gateway renews the lease when the request arrives: counting
		// from when it was sent is on the safe side.
		l.renew(sent)

		// The gateway answers at once while a cancel is pending: pace the
		// heartbeats then, and whenever it did not hold one.
		pause := every/10 - time.Since(sent)
		if wantInputs && len(resp.Inputs) > 0 && !resp.CancelRequested {
			l.inputs <- resp.Inputs
			wantInputs, pause = false, 0
		}
		if resp.CancelRequested {
			if !cancelled {
				close(l.cancel)
			}
			cancelled = true
			pause = every
		}
		if sleep(ctx, pause) != nil {
			return
		}
	}
}
