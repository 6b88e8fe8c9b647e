package main

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// A part that fails closes what assemble opened and says why: here the
// store of a database never migrated.
func TestAssembleFailsOnUnmigratedDatabase(t *testing.T) {
	cfg := planeConfig{common: common{dataDir: t.TempDir()}, work: &workConfig{}}
	p, err := assemble(t.Context(), slog.New(slog.DiscardHandler), cfg)
	if err == nil || !strings.Contains(err.Error(), "outpost migrate") {
		t.Fatalf("assemble = %v, %v; want an error asking for `outpost migrate`", p, err)
	}
}

// A database one migration behind is refused, asking for `outpost migrate`;
// one ahead (a newer outpost migrated it: a rolling upgrade, a rollback) is
// served, with a warning naming both versions.
func TestCheckSchemaServesANewerSchema(t *testing.T) {
	s := storetest.Open(t, store.Postgres)
	latest := store.LatestSchemaVersion()
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if err := s.DB().Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'a newer release', now())", latest+1).Error; err != nil {
		t.Fatal(err)
	}
	if err := checkSchema(t.Context(), log, s); err != nil {
		t.Errorf("a schema one migration ahead: %v, want it served", err)
	}
	if want := fmt.Sprintf("schema_version=%d outpost_schema_version=%d", latest+1, latest); !strings.Contains(logs.String(), want) {
		t.Errorf("log %q, want a warning with %q", logs.String(), want)
	}
	if err := s.DB().Exec("DELETE FROM schema_migrations WHERE version >= ?", latest).Error; err != nil {
		t.Fatal(err)
	}
	if err := checkSchema(t.Context(), log, s); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at version %d, this outpost needs %d: run `outpost migrate`", latest-1, latest)) {
		t.Errorf("a schema one migration behind: %v, want a refusal asking for outpost migrate", err)
	}
}
