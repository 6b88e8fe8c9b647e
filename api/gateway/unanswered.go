package gateway

import (
	"context"
	"time"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/internal/ctxsleep"
	"github.com/outpost-dev/outpost/protocol"
)

// unansweredSlack widens the time of a runner's unanswered claims: the
// network's delay, and the clocks of the replica that claimed and this one.
// renewGrace is how old a claim must be for a lease never renewed to mean
// that no process of the runner got it: each sends its first job heartbeat
// as it starts the job.
const (
	unansweredSlack = time.Second
	renewGrace      = 2 * time.Second
)

// checkUnanswered refuses times that are negative, past
// protocol.MaxUnansweredMS, or a failure before the sending.
func checkUnanswered(u *protocol.UnansweredClaims) error {
	switch {
	case u == nil:
		return nil
	case u.SentMSAgo < 0 || u.SentMSAgo > protocol.MaxUnansweredMS:
		return apierr.Invalid("unanswered.sent_ms_ago", "is %d, not between 0 and %d", u.SentMSAgo, protocol.MaxUnansweredMS)
	case u.FailedMSAgo < 0 || u.FailedMSAgo > u.SentMSAgo:
		return apierr.Invalid("unanswered.failed_ms_ago", "is %d, not between 0 and sent_ms_ago (%d)", u.FailedMSAgo, u.SentMSAgo)
	}
	return nil
}

// releaseUnanswered puts back the jobs claimed for the runner while its
// unanswered claims were held, which it never got (claim.go): rather than
// waiting for their leases to end. A failure leaves them to their leases.
func (g *Gateway) releaseUnanswered(ctx context.Context, runnerID string, req protocol.ClaimRequest) {
	u := req.Unanswered
	if u == nil {
		return
	}
	now := time.Now()
	from := now.Add(-time.Duration(u.SentMSAgo)*time.Millisecond - unansweredSlack)
	to := now.Add(-time.Duration(u.FailedMSAgo)*time.Millisecond + unansweredSlack)
	if ctxsleep.Sleep(ctx, time.Until(to.Add(renewGrace))) != nil { // every claim of the time renewGrace old
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	jobs, err := g.store.ReleaseUnanswered(rctx, runnerID, req.Version, from, to, g.iv.Lease(), u.Held)
	if err != nil {
		g.log.Error("gateway: putting back jobs claimed for a runner that got no answer; they wait for their leases to end",
			"runner", runnerID, "err", err)
	}
	if len(jobs) > 0 {
		g.log.Info("gateway: a runner never got the answer to its claim; queued again", "runner", runnerID, "jobs", jobs)
	}
}
