package migrations

import "gorm.io/gorm"

// The upgrade test's next release carries one more migration, as a release
// would: it adds a column, which the release before ignores (migrations keep
// the previous release working). The test builds that image with `go build
// -overlay`, which adds this file to package migrations; no other build has it.
func init() {
	All = append(All, Migration{Version: len(All) + 1, Name: "upgrade test: jobs.upgrade_note", Up: func(tx *gorm.DB) error {
		return tx.Exec("ALTER TABLE jobs ADD COLUMN upgrade_note TEXT").Error
	}})
}
