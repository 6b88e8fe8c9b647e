package migrations

import "gorm.io/gorm"

// v7 adds config deploys: the config version an install runs, and the one
// each of its components was deployed from.
func v7(tx *gorm.DB) error {
	if err := addColumns(tx, "installs", &v7Install{}, "ConfigVersion"); err != nil {
		return err
	}
	return addColumns(tx, "install_components", &v7InstallComponent{}, "ConfigVersion")
}

// v7Install is the column v7 adds to installs.
type v7Install struct {
	ConfigVersion int `gorm:"not null;default:0"`
}

// v7InstallComponent is the column v7 adds to install_components.
type v7InstallComponent struct {
	ConfigVersion int `gorm:"not null;default:0"`
}
