package migrations

import "gorm.io/gorm"

// v25 records a deprovision that forgets what it cannot destroy (forget on
// the operation) and, on each step it could not destroy, what that step
// left behind (JSON list of resources; empty when nothing was).
func v25(tx *gorm.DB) error {
	if err := addColumns(tx, "install_operations", &v25InstallOperation{}, "Forget"); err != nil {
		return err
	}
	return addColumns(tx, "install_steps", &v25InstallStep{}, "LeftBehind")
}

// v25InstallOperation is the column v25 adds to install_operations.
type v25InstallOperation struct {
	Forget bool `gorm:"not null;default:false"`
}

// v25InstallStep is the column v25 adds to install_steps.
type v25InstallStep struct {
	LeftBehind string `gorm:"type:text;not null;default:''"`
}
