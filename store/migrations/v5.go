package migrations

import (
	"time"
)

// v5 adds the jobs' deferred inputs.
var v5 = steps(
	add("jobs", &v5Job{}, "InputsDeferred", "Inputs", "InputsAt", "InputsWaitMS"),
)

// v5Job is the columns v5 adds to jobs.
type v5Job struct {
	InputsDeferred bool    `gorm:"not null;default:false"`
	Inputs         *string `gorm:"type:text"`
	InputsAt       *time.Time
	InputsWaitMS   int64 `gorm:"not null;default:0"`
}
