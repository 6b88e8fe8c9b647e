package main

import (
	"log/slog"
	"strings"
	"testing"
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
