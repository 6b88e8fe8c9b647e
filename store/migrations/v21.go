package migrations

import "gorm.io/gorm"

// v21 keeps, on each step, what the plan policies said of its plan
// (protocol.PolicyResult JSON; empty when no policy ran).
func v21(tx *gorm.DB) error {
	return addColumns(tx, "install_steps", &v21InstallStep{}, "Policies")
}

// v21InstallStep is the column v21 adds to install_steps.
type v21InstallStep struct {
	Policies string `gorm:"type:text;not null;default:''"`
}
