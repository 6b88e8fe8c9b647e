package migrations

import (
	"time"
)

// v19 is the customer's side of a runner: the policy, pause and consents it
// reports; who started an operation or a command (the runner keeps it in
// the customer's history); why an operation waits; and each job attempt's
// log bytes, for the log quota.
var v19 = steps(
	add("runners", &v19Runner{}, "CustomerPolicy", "PausedSince", "Consents"),
	add("install_operations", &v19Operation{}, "StartedBy", "WaitingReason"),
	add("install_commands", &v19Command{}, "StartedBy"),
	add("job_attempts", &v19JobAttempt{}, "LogBytes", "LogTruncated"),
)

type v19Runner struct {
	CustomerPolicy string `gorm:"type:text"`
	PausedSince    *time.Time
	Consents       string `gorm:"type:text"`
}

type v19Operation struct {
	StartedBy     string `gorm:"size:200;not null;default:''"`
	WaitingReason string `gorm:"type:text;not null;default:''"`
}

type v19Command struct {
	StartedBy string `gorm:"size:200;not null;default:''"`
}

type v19JobAttempt struct {
	LogBytes     int64 `gorm:"not null;default:0"`
	LogTruncated bool  `gorm:"not null;default:false"`
}
