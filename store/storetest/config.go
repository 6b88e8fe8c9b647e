package storetest

import (
	"context"
	"io/fs"
	"testing"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/store"
)

// SyncConfig syncs an app config (a directory as a file system) into the
// tenant's app and returns the config version it made.
func SyncConfig(t *testing.T, s *store.Store, tn Tenant, app fs.FS) store.AppConfig {
	t.Helper()
	archive, err := appconfig.ArchiveDir(app, ".")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := s.SyncAppConfig(context.Background(), tn.Org.ID, tn.App.ID, store.NewAppConfig{Archive: archive})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
