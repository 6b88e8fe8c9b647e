package migrations

// v7 adds config deploys: the config version an install runs, and the one
// each of its components was deployed from.
var v7 = steps(
	add("installs", &v7Install{}, "ConfigVersion"),
	add("install_components", &v7InstallComponent{}, "ConfigVersion"),
)

// v7Install is the column v7 adds to installs.
type v7Install struct {
	ConfigVersion int `gorm:"not null;default:0"`
}

// v7InstallComponent is the column v7 adds to install_components.
type v7InstallComponent struct {
	ConfigVersion int `gorm:"not null;default:0"`
}
