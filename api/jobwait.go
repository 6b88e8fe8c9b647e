package api

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// Why a queued job is not running yet, the first that holds.
const (
	waitRunnerOffline = "runner_offline" // its runner is not polling
	waitInputs        = "inputs"         // its inputs are not known yet, and its runner cannot hold it meanwhile
	waitQueue         = "queue"          // its runner is online: it is in its queue
)

// waiting explains a queued job (nil for any other).
func (s *Server) waiting(ctx context.Context, j store.Job) (*wire.JobWaiting, error) {
	if j.Status != status.JobQueued {
		return nil, nil
	}
	r, err := s.store.GetRunner(ctx, j.OrgID, j.RunnerID)
	if err != nil {
		return nil, fmt.Errorf("the runner of job %s: %w", j.ID, err)
	}
	loads, err := s.store.RunnerLoads(ctx, j.OrgID, r.ID)
	if err != nil {
		return nil, err
	}
	pos, err := s.store.QueuePosition(ctx, j)
	if err != nil {
		return nil, err
	}
	v := s.runnerView(r, loads[r.ID], nil)
	w := &wire.JobWaiting{Position: pos, RunnerStatus: v.Status, RunnerLastSeenAt: r.LastSeenAt, RunnerRunningJobs: v.RunningJobs}
	switch {
	case v.Status != runnerOnline && r.LastSeenAt == nil:
		w.Reason, w.Message = waitRunnerOffline, fmt.Sprintf("its runner %s has never connected: is it installed, and can it reach the gateway?", r.ID)
	case v.Status != runnerOnline:
		w.Reason, w.Message = waitRunnerOffline, fmt.Sprintf("its runner %s has been offline since %s (last seen)", r.ID, r.LastSeenAt.UTC().Format(time.RFC3339))
	case j.InputsDeferred && j.InputsAt == nil && !slices.Contains(r.Capabilities, protocol.CapabilityDeferredInputs):
		w.Reason, w.Message = waitInputs, "its inputs are not known yet (the steps it takes outputs from have not finished), and its runner cannot hold it until they are"
	default:
		w.Reason, w.Message = waitQueue, fmt.Sprintf("its runner %s is online with %d job(s) running; this job is number %d in its queue", r.ID, v.RunningJobs, pos)
	}
	return w, nil
}
