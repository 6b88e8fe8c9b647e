package migrations

import (
	"gorm.io/gorm"
)

// v25 records the API's decision on a step's plan: the workflow applies a
// plan only when the store holds an approval.
func v25(tx *gorm.DB) error {
	return addColumns(tx, "install_steps", &v25InstallStep{}, "Decision")
}

// v25InstallStep is the column v25 adds to install_steps.
type v25InstallStep struct {
	Decision string `gorm:"size:20;not null;default:''"`
}
