package devserver

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	// Imported for its side effect as well: registers the "sqlite"
	// database/sql driver (modernc.org/sqlite) and the Temporal plugin.
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

// createSchema creates a new SQLite database with Temporal's schema at path: written to a
// temporary file and renamed into place (an interrupted start leaves no half-made database),
// through a handle of its own, not the plugin's pool (see the package doc).
func createSchema(path string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".init-*")
	if err != nil {
		return fmt.Errorf("devserver: creating database file: %w", err)
	}
	tmpPath := tmp.Name()
	_ = tmp.Close()
	defer func() {
		if err != nil {
			_ = os.Remove(tmpPath)
			_ = os.Remove(tmpPath + "-journal")
		}
	}()

	// Same DSN form as the Temporal plugin uses.
	db, err := sql.Open("sqlite", "file:"+tmpPath+"?mode=rw")
	if err != nil {
		return fmt.Errorf("devserver: opening new database: %w", err)
	}
	if err := sqliteschema.SetupSchemaOnDB(execOnlyDB{db: db}); err != nil {
		_ = db.Close()
		return fmt.Errorf("devserver: setting up schema: %w", err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("devserver: closing new database: %w", err)
	}
	if err := os.Rename(tmpPath, path); err != nil {
		return fmt.Errorf("devserver: installing new database: %w", err)
	}
	return nil
}

// execOnlyDB is the sliver of sqlplugin.AdminDB that
// sqliteschema.SetupSchemaOnDB uses (Exec). Any other method panics on the
// nil embedded interface, which the package tests would catch after a
// server upgrade.
type execOnlyDB struct {
	sqlplugin.AdminDB
	db *sql.DB
}

func (e execOnlyDB) Exec(stmt string, args ...any) error {
	_, err := e.db.Exec(stmt, args...)
	return err
}
