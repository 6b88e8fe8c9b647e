package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// Migration is one versioned schema change, run in its own transaction.
type Migration struct {
	Version int
	Name    string
	Up      func(tx *gorm.DB) error
}

// All lists the migrations in order: All[i].Version is i+1.
var All = []Migration{
	{1, "initial schema", v1},
	{2, "terraform state backend", v2},
	{3, "install operations, steps, outputs", v3},
	{4, "builds, install components, settings", v4},
	{5, "jobs with deferred inputs", v5},
	{6, "input versions and applied renders", v6},
	{7, "install and component config versions", v7},
	{8, "maintenance windows and drift", v8},
	{9, "install labels and releases", v9},
	{10, "operations triggered by another", v10},
	{11, "step dependencies", v11},
	{12, "build provenance", v12},
	{13, "runner connection errors", v13},
	{14, "runner online since", v14},
	{15, "audit log", v15},
	{16, "data keys of secrets at rest", v16},
	{17, "support bundles", v17},
	{18, "runner self-update", v18},
	{19, "the customer's side of runners, log quotas", v19},
	// 20: reserved for a branch that landed later under another number (a no-op kept so databases that ran it stay consistent).
	{20, "reserved", reserved},
	{21, "plan policy results on steps", v21},
	{22, "plan decisions recorded by the API", v22},
	{23, "deprovision with forget: what steps left behind", v23},
	{24, "registry signing keys per org, sealed", v24},
	{25, "users, roles, sessions, scoped tokens", v25},
	{26, "action runs and their steps", v26},
	{27, "notification subscriptions and deliveries", v27},
	{28, "action runs of lifecycle hooks linked to their operation", v28},
	{29, "runbook runs and their steps", v29},
	{30, "component health and its transitions", v30},
	{31, "health-gated releases: soak, on_unhealthy, rollback operations", v31},
	{32, "release keys per org, sealed", v32},
	{33, "the notification outbox; runner_offline_minutes of subscriptions", v33},
	{34, "exclusive action runs; health results of health-check actions", v34},
	{35, "imported offline deploys: an operation's source and bundle; offline results", v35},
	{36, "runners' platforms", v36},
	{37, "the images a chart's build copied", v37},
}

// reserved stands for another branch's migration until it is merged.
func reserved(*gorm.DB) error { return nil }

// change is one step of a migration.
type change func(tx *gorm.DB) error

// steps is a migration that makes its changes in order, stopping at the
// first that fails.
func steps(changes ...change) func(tx *gorm.DB) error {
	return func(tx *gorm.DB) error {
		for _, c := range changes {
			if err := c(tx); err != nil {
				return err
			}
		}
		return nil
	}
}

// create creates the snapshots' tables.
func create(snapshots ...any) change {
	return func(tx *gorm.DB) error { return tx.Migrator().CreateTable(snapshots...) }
}

// add adds the snapshot's fields to an existing table, in order.
func add(table string, snapshot any, fields ...string) change {
	return func(tx *gorm.DB) error {
		m := tx.Table(table).Migrator()
		for _, f := range fields {
			if err := m.AddColumn(snapshot, f); err != nil {
				return fmt.Errorf("add %s.%s: %w", table, f, err)
			}
		}
		return nil
	}
}

// index creates the snapshot's index name on an existing table.
func index(table string, snapshot any, name string) change {
	return func(tx *gorm.DB) error { return tx.Table(table).Migrator().CreateIndex(snapshot, name) }
}

// exec runs a statement (a data change).
func exec(sql string) change {
	return func(tx *gorm.DB) error { return tx.Exec(sql).Error }
}
