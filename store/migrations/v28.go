package migrations

import "gorm.io/gorm"

// v28 links an action run a lifecycle hook started to its operation and
// the operation's step that ran it ("" for manual and cron runs).
func v28(tx *gorm.DB) error {
	if err := addColumns(tx, "action_runs", &v28ActionRun{}, "OperationID", "OperationStep"); err != nil {
		return err
	}
	return tx.Table("action_runs").Migrator().CreateIndex(&v28ActionRun{}, "idx_action_runs_operation")
}

// v28ActionRun is the columns v28 adds to action_runs.
type v28ActionRun struct {
	OperationID   string `gorm:"size:32;not null;default:'';index:idx_action_runs_operation"`
	OperationStep string `gorm:"size:200;not null;default:'';index:idx_action_runs_operation"`
}
