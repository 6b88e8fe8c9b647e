package gateway

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/notify"
)

// claimTimeout bounds one claim in the database, which goes on when the
// runner stops waiting; releaseTimeout bounds putting back a job whose
// claim could not be answered.
const (
	claimTimeout   = 30 * time.Second
	releaseTimeout = 10 * time.Second
)

// claim is the long poll: it asks the database only when the runner may have work (see the
// package doc); a job another transaction held (store.ErrJobsBusy) is asked for again shortly.
// It ends at once, with no job, when the gateway drains or the runner ends the claim's round.
func (g *Gateway) claim(c echo.Context) error {
	var req protocol.ClaimRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	if err := checkRound("round", req.Round); err != nil {
		return err
	}
	r := runnerFrom(c)
	ctx := c.Request().Context()
	keys, err := g.credentialKeys(ctx, r.OrgID) // before claiming: a claimed attempt must reach the runner
	if err != nil {
		return err
	}
	wake := make(chan struct{}, 1)
	g.mu.Lock()
	st := g.state(r.ID)
	st.waiters[wake] = struct{}{}
	st.seen = true
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(st.waiters, wake)
		st.seen = true
		g.mu.Unlock()
	}()
	// What the runner runs decides which jobs it may be given, and so what
	// "known empty" means.
	claimant := store.Claimant{DeferredInputs: slices.Contains(req.Capabilities, protocol.CapabilityDeferredInputs),
		GivenInputs: req.GivenInputs, Version: req.Version, OnlyType: req.OnlyType}
	deadline := g.clock.after(g.iv.ClaimWait())
	backoff := time.Duration(0) // while the jobs it could run are locked
	for {
		g.mu.Lock()
		gen, over := st.gen, g.draining || st.paused || (req.Round != "" && st.endedRound == req.Round)
		known := st.emptyOK && st.emptyGen == gen && st.emptyFor == claimant && time.Since(st.emptyAt) < g.cfg.EmptyTTL
		g.mu.Unlock()
		if over {
			return c.NoContent(http.StatusNoContent)
		}
		var busy <-chan time.Time // set when a queued job was locked: ask again soon
		if !known {
			job, err := g.claimOne(ctx, r.ID, claimant)
			switch {
			case ctx.Err() != nil:
				return nil // the runner went away: nothing to answer, no error to log
			case errors.Is(err, store.ErrJobsBusy):
				next := min(max(2*backoff, busyRetry), busyRetryMax)
				if next == busyRetryMax && backoff != busyRetryMax {
					g.log.Warn("gateway: a runner's queued jobs have stayed locked by another transaction for over a second",
						"runner", r.ID)
				}
				backoff = next
				busy = time.After(backoff)
			case err != nil:
				return err
			case job != nil:
				return c.JSON(http.StatusOK, protocol.Job{ID: job.ID, Type: job.Type, Attempt: job.Attempt,
					LeaseExpiresAt: *job.LeaseExpiresAt, TimeoutMS: job.TimeoutMS, Manifest: g.attemptManifest(ctx, keys, job),
					InputsDeferred: job.InputsDeferred, InputsWaitMS: job.InputsWaitMS, Origin: g.origin(ctx, job)})
			default:
				backoff = 0
				g.mu.Lock()
				if st.gen == gen {
					st.emptyOK, st.emptyGen, st.emptyAt, st.emptyFor = true, gen, time.Now(), claimant
				}
				g.mu.Unlock()
			}
		}
		select {
		case <-busy:
		case <-wake:
		case <-deadline:
			return c.NoContent(http.StatusNoContent)
		case <-ctx.Done():
			return nil
		}
	}
}

// claimOne claims a job whether or not the runner is still waiting, so the
// claim either happened or did not; when the runner went away meanwhile, the
// job is put back in its queue rather than left to its lease.
func (g *Gateway) claimOne(ctx context.Context, runnerID string, c store.Claimant) (*store.Job, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	job, err := g.store.ClaimJob(cctx, runnerID, g.iv.Lease(), c)
	if job == nil || ctx.Err() == nil {
		if job != nil && job.Attempt == 1 {
			g.cfg.Metrics.JobClaimed(job.Type, time.Since(job.CreatedAt))
		}
		return job, err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := g.store.ReleaseClaim(rctx, runnerID, job.ID, job.Attempt); err != nil {
		g.log.Error("gateway: putting back a job whose runner stopped waiting; it waits for its lease to end",
			"runner", runnerID, "job", job.ID, "attempt", job.Attempt, "err", err)
	} else {
		g.log.Info("gateway: the runner stopped waiting as its job was claimed; queued again", "runner", runnerID, "job", job.ID)
	}
	return nil, ctx.Err()
}

// checkRound refuses a round name over protocol.MaxRoundLength.
func checkRound(field, round string) error {
	if len(round) > protocol.MaxRoundLength {
		return apierr.Invalid(field, "is %d bytes, more than %d", len(round), protocol.MaxRoundLength)
	}
	return nil
}

// endRound answers the runner's held claim of that round now, and any later
// claim of it at once, on this gateway and, through the store's bus (which
// onNotify reads), on every other replica: the claim may be held elsewhere.
func (g *Gateway) endRound(ctx context.Context, runnerID, round string) {
	g.mu.Lock()
	st := g.state(runnerID)
	st.endedRound = round
	wakeAll(st)
	g.mu.Unlock()
	if err := g.store.Bus().Publish(ctx, notify.RoundEndTopic(runnerID, round)); err != nil {
		g.log.Warn("gateway: telling the other replicas a claim round ended", "runner", runnerID, "err", err)
	}
}
