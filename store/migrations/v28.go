package migrations

// v28 links an action run a lifecycle hook started to its operation and
// the operation's step that ran it ("" for manual and cron runs).
var v28 = steps(
	add("action_runs", &v28ActionRun{}, "OperationID", "OperationStep"),
	index("action_runs", &v28ActionRun{}, "idx_action_runs_operation"),
)

// v28ActionRun is the columns v28 adds to action_runs.
type v28ActionRun struct {
	OperationID   string `gorm:"size:32;not null;default:'';index:idx_action_runs_operation"`
	OperationStep string `gorm:"size:200;not null;default:'';index:idx_action_runs_operation"`
}
