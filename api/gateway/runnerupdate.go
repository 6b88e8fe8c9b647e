package gateway

import (
	"context"

	"github.com/outpost-dev/outpost/protocol"
)

// runnerUpdateReport records what a runner says of an update: rolled back,
// held for its customer, or accepted by the customer (the new version's
// health job is then queued here: the update's workflow has ended).
func (g *Gateway) runnerUpdateReport(ctx context.Context, runnerID string, rep protocol.RunnerUpdateReport) error {
	if rep.Status == protocol.UpdateAccepting {
		g.log.Info("gateway: the customer accepted a runner update", "runner", runnerID, "update", rep.UpdateID, "version", rep.Version)
		return g.store.EnqueueAcceptedUpdateHealthJob(ctx, runnerID, rep.UpdateID)
	}
	if err := g.store.RecordRunnerUpdateReport(ctx, runnerID, rep); err != nil {
		return err
	}
	if rep.Status == protocol.UpdateRolledBack {
		g.log.Warn("gateway: runner update rolled back", "runner", runnerID, "update", rep.UpdateID, "reason", rep.Reason)
	}
	return nil
}
