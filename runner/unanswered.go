package runner

import (
	"maps"
	"sync"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// heldJobs are the attempts the runner runs, from their start until their
// supervisor returns: job id to attempt.
type heldJobs struct {
	mu sync.Mutex
	m  map[string]int
}

func (h *heldJobs) add(jobID string, attempt int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]int{}
	}
	h.m[jobID] = attempt
}

func (h *heldJobs) remove(jobID string, attempt int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m[jobID] == attempt {
		delete(h.m, jobID)
	}
}

func (h *heldJobs) snapshot() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.m)
}

// unanswered are a round's claims that got no answer since its last answered
// one: a gateway killed between claiming a job and answering, a connection
// broken meanwhile. The next claim tells of them and the gateway puts back
// such a job at once, rather than at the end of its lease (docs/architecture/runner.md,
// "Claim rounds").
type unanswered struct {
	sent, failed time.Time // zero: none
}

// after records how the claim sent at asked ended: err without the
// gateway's answer (statusOf 0) is unanswered, any answer clears them.
func (u *unanswered) after(asked time.Time, err error) {
	switch {
	case err == nil || statusOf(err) != 0:
		*u = unanswered{}
	case u.sent.IsZero():
		u.sent, u.failed = asked, time.Now()
	default:
		u.failed = time.Now()
	}
}

// report is what the next claim says of them, nil when there are none.
func (u *unanswered) report(held *heldJobs) *protocol.UnansweredClaims {
	if u.sent.IsZero() {
		return nil
	}
	sent := time.Since(u.sent).Milliseconds()
	if sent > protocol.MaxUnansweredMS {
		*u = unanswered{} // left to their leases
		return nil
	}
	return &protocol.UnansweredClaims{SentMSAgo: sent, FailedMSAgo: min(time.Since(u.failed).Milliseconds(), sent),
		Held: held.snapshot()}
}
