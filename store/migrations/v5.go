package migrations

import (
	"time"

	"gorm.io/gorm"
)

// v5 adds the jobs' deferred inputs.
func v5(tx *gorm.DB) error {
	return addColumns(tx, "jobs", &v5Job{}, "InputsDeferred", "Inputs", "InputsAt", "InputsWaitMS")
}

// v5Job is the columns v5 adds to jobs.
type v5Job struct {
	InputsDeferred bool    `gorm:"not null;default:false"`
	Inputs         *string `gorm:"type:text"`
	InputsAt       *time.Time
	InputsWaitMS   int64 `gorm:"not null;default:0"`
}
