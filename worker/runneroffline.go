package worker

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/store"
)

// OfflineHorizon bounds how long ago a runner may have been last seen to be
// told of as offline: one offline longer was told of already (the outbox
// keeps its event longer than this).
const OfflineHorizon = 7 * 24 * time.Hour

// offlineStore is what the runner sweep reads and writes of the store.
type offlineStore interface {
	OfflineThresholds(ctx context.Context) ([]store.OfflineThreshold, error)
	RunnersLastSeenBetween(ctx context.Context, orgID string, after, before time.Time) ([]store.OfflineRunner, error)
	QueueEvent(ctx context.Context, ev contract.NotificationEvent, offlineMinutes int) error
}

// queueOfflineRunners writes runner.offline, for each threshold the org's
// subscriptions use, for each install runner of the org offline longer than
// it. An offline spell is named by when its runner was last seen, so each
// spell is one event per threshold, however many sweeps see it.
func queueOfflineRunners(ctx context.Context, s offlineStore, now time.Time) error {
	ths, err := s.OfflineThresholds(ctx)
	if err != nil {
		return err
	}
	for _, th := range ths {
		runners, err := s.RunnersLastSeenBetween(ctx, th.OrgID, now.Add(-OfflineHorizon), now.Add(-time.Duration(th.Minutes)*time.Minute))
		if err != nil {
			return err
		}
		for _, r := range runners {
			if err := s.QueueEvent(ctx, offlineEvent(th, r), th.Minutes); err != nil {
				return err
			}
		}
	}
	return nil
}

// offlineEvent is runner.offline of one runner's offline spell, for one
// threshold.
func offlineEvent(th store.OfflineThreshold, r store.OfflineRunner) contract.NotificationEvent {
	seen := r.LastSeenAt.UTC()
	return contract.NotificationEvent{
		ID:   contract.EventID(contract.EventRunnerOffline, r.RunnerID, seen.Format(time.RFC3339Nano), strconv.Itoa(th.Minutes)),
		Type: contract.EventRunnerOffline, Time: seen.Add(time.Duration(th.Minutes) * time.Minute), OrgID: th.OrgID,
		AppID: r.AppID, InstallID: r.InstallID, RunnerID: r.RunnerID,
		Summary: fmt.Sprintf("Install %s: its runner has been offline for more than %d minutes (last seen %s)",
			r.InstallName, th.Minutes, seen.Format(time.RFC3339)),
	}
}
