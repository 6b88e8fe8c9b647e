package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// FleetStats are the counts the control plane's metrics read from the
// database at each scrape, over every org: aggregate numbers only.
type FleetStats struct {
	// RunnersOnline: runners seen within the online window.
	RunnersOnline int64
	// JobsQueued: jobs waiting to be claimed.
	JobsQueued int64
	// Operations: install operations by kind, then status.
	Operations map[OpKey]int64
	// Deliveries: notification deliveries by state (every state, 0 when none).
	Deliveries map[string]int64
}

// OpKey is an operation's kind and status.
type OpKey struct {
	Kind   string
	Status string
}

// CountFleet counts what FleetStats holds in three queries; a runner
// counts as online when seen within onlineWindow of now.
func (s *Store) CountFleet(ctx context.Context, onlineWindow time.Duration) (FleetStats, error) {
	st := FleetStats{Operations: map[OpKey]int64{}}
	db := s.db.WithContext(ctx)
	if err := db.Model(&Runner{}).Where("last_seen_at >= ?", s.now().Add(-onlineWindow)).Count(&st.RunnersOnline).Error; err != nil {
		return st, fmt.Errorf("count runners online: %w", err)
	}
	if err := db.Model(&Job{}).Where("status = ?", status.JobQueued).Count(&st.JobsQueued).Error; err != nil {
		return st, fmt.Errorf("count queued jobs: %w", err)
	}
	var ops []struct {
		Kind, Status string
		N            int64
	}
	if err := db.Model(&InstallOperation{}).Select("kind, status, count(*) AS n").Group("kind, status").Scan(&ops).Error; err != nil {
		return st, fmt.Errorf("count operations: %w", err)
	}
	for _, o := range ops {
		st.Operations[OpKey{o.Kind, o.Status}] = o.N
	}
	var dels []struct {
		State string
		N     int64
	}
	if err := db.Model(&NotificationDelivery{}).Select("state, count(*) AS n").Group("state").Scan(&dels).Error; err != nil {
		return st, fmt.Errorf("count notification deliveries: %w", err)
	}
	st.Deliveries = map[string]int64{DeliveryPending: 0, DeliveryDelivered: 0, DeliveryFailed: 0}
	for _, d := range dels {
		st.Deliveries[d.State] = d.N
	}
	return st, nil
}
