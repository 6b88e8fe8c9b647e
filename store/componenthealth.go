package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// ComponentHealth is an install component's health as its runner last
// reported it (docs/architecture/health.md). Since is when it took its
// current state.
type ComponentHealth struct {
	InstallID  string    `gorm:"primaryKey;size:32" json:"-"`
	Component  string    `gorm:"primaryKey;size:200" json:"component"`
	OrgID      string    `gorm:"size:32;not null;index" json:"-"`
	State      string    `gorm:"size:20;not null" json:"state"`
	Object     string    `gorm:"type:text;not null;default:''" json:"object,omitempty"`
	Condition  string    `gorm:"type:text;not null;default:''" json:"condition,omitempty"`
	Since      time.Time `gorm:"not null" json:"since"`
	ReportedAt time.Time `gorm:"not null" json:"reported_at"`
	// Source is "" for the runner's reading of a helm release, or
	// "action:<name>" for a health-check action's result.
	Source string `gorm:"size:120;not null;default:''" json:"source,omitempty"`
	// StaleAfter is when an action's result stops counting: read unknown
	// from then on (nil: it stands until the next result).
	StaleAfter *time.Time `json:"stale_after,omitempty"`
}

// TableName keeps the singular.
func (ComponentHealth) TableName() string { return "component_health" }

// HealthTransition is one change of a component's state.
type HealthTransition struct {
	ID        int64     `gorm:"primaryKey;autoIncrement" json:"-"`
	InstallID string    `gorm:"size:32;not null;index:idx_health_transitions_install_at" json:"-"`
	Component string    `gorm:"size:200;not null" json:"component"`
	FromState string    `gorm:"size:20;not null;default:''" json:"from,omitempty"`
	ToState   string    `gorm:"size:20;not null" json:"to"`
	Object    string    `gorm:"type:text;not null;default:''" json:"object,omitempty"`
	Condition string    `gorm:"type:text;not null;default:''" json:"condition,omitempty"`
	At        time.Time `gorm:"not null;index:idx_health_transitions_install_at" json:"at"`
}

// RecordComponentHealth records what an install's runner reported: each
// component's current health, and a transition when its state changed (a
// report that repeats the state, or only changes why, adds none); and, in
// the same transaction, health.changed to the notification outbox when the
// install's health (its worst component's state) changed.
func (s *Store) RecordComponentHealth(ctx context.Context, orgID, installID string, reports []protocol.ComponentHealth) error {
	if len(reports) == 0 {
		return nil
	}
	now := s.now()
	rows := make([]ComponentHealth, len(reports))
	for i, r := range reports {
		rows[i] = ComponentHealth{InstallID: installID, Component: r.Component, OrgID: orgID, State: r.State,
			Object: r.Object, Condition: r.Condition, ReportedAt: now}
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return recordReadings(tx, orgID, installID, rows, now) })
	if err != nil {
		return fmt.Errorf("store: record component health of %s: %w", installID, err)
	}
	return nil
}

// recordReadings saves rows as their components' current health and, when
// the install's health (its worst component's state) changed,
// health.changed to the notification outbox, in tx.
func recordReadings(tx *gorm.DB, orgID, installID string, rows []ComponentHealth, now time.Time) error {
	// The install's row first: the runner's readings (gateway) and the
	// health-check actions' results (worker) must not interleave between the
	// worst before and the worst after, or an event would name the wrong end.
	var inst Install
	if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Select("id").Where("id = ?", installID).Take(&inst).Error; err != nil {
		return notFound(err, "install "+installID)
	}
	before, err := worstComponent(tx, installID)
	if err != nil {
		return err
	}
	var last int64 // the readings' last transition
	for _, row := range rows {
		id, err := recordHealth(tx, row)
		if err != nil {
			return err
		}
		last = max(last, id)
	}
	if last == 0 {
		return nil
	}
	after, err := worstComponent(tx, installID)
	if err != nil {
		return err
	}
	return queueHealthChanged(tx, orgID, installID, before, after, last, now)
}

// recordHealth saves row (its Since aside) as its component's current
// health, and a transition when the state changed (its ID answered);
// ReportedAt is now.
func recordHealth(tx *gorm.DB, row ComponentHealth) (int64, error) {
	var cur ComponentHealth
	err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("install_id = ? AND component = ?", row.InstallID, row.Component).
		Limit(1).Find(&cur).Error
	if err != nil {
		return 0, err
	}
	row.Since = cur.Since
	var id int64
	if cur.State != row.State {
		row.Since = row.ReportedAt
		t := HealthTransition{InstallID: row.InstallID, Component: row.Component, FromState: cur.State, ToState: row.State,
			Object: row.Object, Condition: row.Condition, At: row.ReportedAt}
		if err := tx.Create(&t).Error; err != nil {
			return 0, err
		}
		id = t.ID
	}
	return id, tx.Save(&row).Error
}

// CheckResult is a health-check action's result for one of its checks (a
// component, or "action:<name>").
type CheckResult struct {
	Check, State, Object, Condition string
	StaleAfter                      *time.Time
}

// RecordCheckHealth records a health-check action's results (source
// "action:<name>") as its checks' current health, as RecordComponentHealth
// records the runner's readings.
func (s *Store) RecordCheckHealth(ctx context.Context, orgID, installID, source string, results []CheckResult) error {
	now := s.now()
	rows := make([]ComponentHealth, len(results))
	for i, r := range results {
		rows[i] = ComponentHealth{InstallID: installID, Component: r.Check, OrgID: orgID, State: r.State, Object: r.Object,
			Condition: r.Condition, ReportedAt: now, Source: source, StaleAfter: r.StaleAfter}
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return recordReadings(tx, orgID, installID, rows, now) })
	if err != nil {
		return fmt.Errorf("store: record the health of %s's checks: %w", source, err)
	}
	return nil
}

// ForgetCheckHealth drops the install's health results of health-check
// actions whose check is not in keep (the action is gone, no longer a
// health check, or names other components).
func (s *Store) ForgetCheckHealth(ctx context.Context, installID string, keep []string) error {
	return s.forgetHealth(ctx, "check", "source <> ''", installID, keep)
}

// ForgetComponentHealth drops the health the runner read of an install's
// components not in keep (no longer deployed by helm); health-check
// actions' results stay (ForgetCheckHealth).
func (s *Store) ForgetComponentHealth(ctx context.Context, installID string, keep []string) error {
	return s.forgetHealth(ctx, "component", "source = ''", installID, keep)
}

// forgetHealth drops the install's health of one kind (which, its rows
// those matching cond) of the components not in keep.
func (s *Store) forgetHealth(ctx context.Context, which, cond, installID string, keep []string) error {
	q := s.db.WithContext(ctx).Where("install_id = ? AND "+cond, installID)
	if len(keep) > 0 {
		q = q.Where("component NOT IN ?", keep)
	}
	if err := q.Delete(&ComponentHealth{}).Error; err != nil {
		return fmt.Errorf("store: forget %s health of %s: %w", which, installID, err)
	}
	return nil
}

// ComponentHealthOf returns the current health of the installs'
// components, by install.
func (s *Store) ComponentHealthOf(ctx context.Context, installIDs ...string) (map[string][]ComponentHealth, error) {
	var rows []ComponentHealth
	if err := s.db.WithContext(ctx).Where("install_id IN ?", installIDs).Order("install_id, component").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: component health: %w", err)
	}
	out := map[string][]ComponentHealth{}
	for _, r := range rows {
		out[r.InstallID] = append(out[r.InstallID], r)
	}
	return out, nil
}

// HealthTransitions returns an install's latest transitions, newest first.
func (s *Store) HealthTransitions(ctx context.Context, installID string, limit int) ([]HealthTransition, error) {
	var out []HealthTransition
	if err := s.db.WithContext(ctx).Where("install_id = ?", installID).Order("at DESC, id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: health transitions: %w", err)
	}
	return out, nil
}

// HealthTargets are what an install's runner checks: each component whose
// latest succeeded helm job was a deploy, as that job's manifest had it
// (release, namespace, kubeconfig).
func (s *Store) HealthTargets(ctx context.Context, installID string) ([]protocol.HealthTarget, error) {
	var rows []struct {
		Name  string
		JobID string
	}
	err := s.db.WithContext(ctx).Table("install_steps AS s").Select("s.name, j.id AS job_id").
		Joins("JOIN install_operations o ON o.id = s.operation_id").Joins("JOIN jobs j ON j.id = s.apply_job_id").
		Where("o.install_id = ? AND j.type = ? AND j.status = ?", installID, protocol.JobTypeHelm, status.JobSucceeded).
		Order("j.finished_at, j.id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: health targets of %s: %w", installID, err)
	}
	latest, order := map[string]string{}, []string{}
	for _, r := range rows {
		if _, ok := latest[r.Name]; !ok {
			order = append(order, r.Name)
		}
		latest[r.Name] = r.JobID
	}
	var out []protocol.HealthTarget
	for _, name := range order {
		var j Job
		if err := s.db.WithContext(ctx).Where("id = ?", latest[name]).Take(&j).Error; err != nil {
			return nil, fmt.Errorf("store: health targets of %s: %w", installID, err)
		}
		var m protocol.HelmManifest
		if err := json.Unmarshal([]byte(j.Manifest), &m); err != nil || m.Operation != protocol.HelmDeploy {
			continue // an uninstall: nothing to check
		}
		out = append(out, protocol.HealthTarget{Component: name, Release: m.Release, Namespace: m.Namespace, Kubeconfig: m.Kubeconfig})
	}
	return out, nil
}
