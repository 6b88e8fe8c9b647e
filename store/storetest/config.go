package storetest

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/store"
)

// MinimalApp is the config of an app named demo whose sandbox only outputs
// id, with files (path → content) added.
func MinimalApp(files map[string]string) fstest.MapFS {
	app := fstest.MapFS{
		"outpost.toml":    {Data: []byte("[app]\nname = \"demo\"\n[sandbox]\nsource = \"sandbox\"\n")},
		"sandbox/main.tf": {Data: []byte("output \"id\" { value = \"s\" }\n")},
	}
	for name, content := range files {
		app[name] = &fstest.MapFile{Data: []byte(content)}
	}
	return app
}

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
