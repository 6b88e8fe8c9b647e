package migrations

import "gorm.io/gorm"

// v36 records each runner's platform ("linux_amd64"), which it reports at
// registration and with its heartbeats: builds vendor terraform providers
// for the platforms of an app's install runners.
func v36(tx *gorm.DB) error {
	return addColumns(tx, "runners", &v36Runner{}, "Platform")
}

type v36Runner struct {
	Platform string `gorm:"size:40;not null;default:''"`
}
