package runner

import (
	"context"
	"crypto/rand"
	"errors"
	"time"
)

// A claim round is one run of the claim loop: the runner starts a new one
// after a hand-over that rolled back. A round ends (shutdown, hand-over, a
// healthy candidate) without cancelling the claim it holds: a job claimed as
// the request is cancelled would be lost until its lease ends. The runner
// names the round in a heartbeat (EndRound), the gateway answers the held
// claim at once, and a job it brings is started like any other. Only when
// the gateway cannot be told, or does not answer within endRoundWait, is the
// request cancelled (the gateway then puts back a job it claimed meanwhile).

// endRoundWait bounds how long an ended round waits for its held claim.
const endRoundWait = 5 * time.Second

type claimRound struct {
	id      string
	quit    context.Context // done once the round ends: no new claims
	stop    context.CancelCauseFunc
	polls   context.Context // the claims' requests, cancelled only as a last resort
	cancel  context.CancelFunc
	stopped chan struct{} // closed once the claim loop returned
}

func newClaimRound(ctx context.Context) *claimRound {
	rd := &claimRound{id: "round-" + rand.Text(), stopped: make(chan struct{})}
	rd.quit, rd.stop = context.WithCancelCause(ctx)
	rd.polls, rd.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return rd
}

// endRound waits for the round to end, then asks the gateway to answer its
// held claim and waits for the claim loop to return.
func (r *Runner) endRound(rd *claimRound) {
	defer rd.cancel()
	select {
	case <-rd.quit.Done():
	case <-rd.stopped:
		return
	}
	if errors.Is(context.Cause(rd.quit), ErrUnauthorized) {
		return // the gateway refuses this runner: nothing to ask it
	}
	ctx, cancel := context.WithTimeout(rd.polls, endRoundWait)
	defer cancel()
	req := r.heartbeatRequest()
	req.EndRound, req.Update = rd.id, nil // the report goes with the regular heartbeats, which clear it
	if _, err := r.gw.RunnerHeartbeat(ctx, req); err != nil {
		r.log.Warn("ending the claim round: the gateway was not told; cancelling the held claim", "err", err)
		return
	}
	select {
	case <-rd.stopped:
	case <-ctx.Done():
		r.log.Warn("ending the claim round: the held claim was not answered; cancelling it", "wait", endRoundWait)
	}
}
