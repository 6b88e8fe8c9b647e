package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// OfflineThreshold is one runner.offline threshold an org's enabled
// subscriptions use.
type OfflineThreshold struct {
	OrgID   string
	Minutes int
}

// OfflineThresholds returns, for each org, the distinct runner.offline
// thresholds of its enabled subscriptions to that event.
func (s *Store) OfflineThresholds(ctx context.Context) ([]OfflineThreshold, error) {
	var out []OfflineThreshold
	err := s.db.WithContext(ctx).Model(&NotificationSubscription{}).
		Select("DISTINCT org_id, runner_offline_minutes AS minutes").
		Where("enabled AND event_types LIKE ?", `%"`+contract.EventRunnerOffline+`"%`).
		Order("org_id, minutes").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("runner offline thresholds: %w", err)
	}
	return out, nil
}

// OfflineRunner is an install's runner last seen within a span.
type OfflineRunner struct {
	RunnerID    string
	InstallID   string
	AppID       string
	InstallName string
	LastSeenAt  time.Time
}

// RunnersLastSeenBetween returns the org's install runners last seen in
// [after, before), but for those of deprovisioned installs: a runner the
// customer took down with its install is not a runner gone offline.
func (s *Store) RunnersLastSeenBetween(ctx context.Context, orgID string, after, before time.Time) ([]OfflineRunner, error) {
	var out []OfflineRunner
	err := s.db.WithContext(ctx).Table("runners AS r").
		Select("r.id AS runner_id, i.id AS install_id, i.app_id, i.name AS install_name, r.last_seen_at").
		Joins("JOIN installs i ON i.id = r.install_id").
		Where("r.org_id = ? AND r.last_seen_at >= ? AND r.last_seen_at < ?", orgID, after, before).
		Where("i.status <> ?", status.InstallDeprovisioned).
		Order("r.last_seen_at, r.id").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("runners of %s last seen before %s: %w", orgID, before.Format(time.RFC3339), err)
	}
	return out, nil
}
