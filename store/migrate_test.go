package store_test

import (
	"context"
	"testing"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// TestMigrateStepByStep upgrades a database one release at a time, each
// migration applied by a store opened for it (as a new binary would), and
// compares the result with a freshly migrated database and with the
// committed schema.
func TestMigrateStepByStep(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		cfg := storetest.NewConfig(t, d)
		for v := 1; v <= store.LatestSchemaVersion(); v++ {
			s := openStore(t, cfg)
			if err := s.MigrateTo(context.Background(), v); err != nil {
				t.Fatalf("migrate to %d: %v", v, err)
			}
			if got, err := s.SchemaVersion(context.Background()); err != nil || got != v {
				t.Fatalf("after migrating to %d the schema version is %d, %v", v, got, err)
			}
			s.Close()
		}
		stepped := openStore(t, cfg)
		defer stepped.Close()
		if err := stepped.Migrate(context.Background()); err != nil {
			t.Fatalf("migrate an up-to-date database: %v", err)
		}
		got := dumpSchema(t, stepped)
		if diff := diffLines(dumpSchema(t, storetest.Open(t, d)), got); diff != "" {
			t.Fatalf("migrated step by step, the schema differs from a fresh one:\n%s", diff)
		}
		if diff := diffLines(goldenSchema(t, d), got); diff != "" {
			t.Fatalf("migrated step by step, the schema differs from testdata/schema-%s.txt:\n%s", d, diff)
		}
	})
}

func openStore(t *testing.T, cfg store.Config) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}
