package migrations_test

import (
	"testing"

	"github.com/outpost-dev/outpost/store/migrations"
)

// Versions count from 1 with no gaps: store applies All[:v] to reach v.
func TestVersionsAreConsecutive(t *testing.T) {
	for i, m := range migrations.All {
		if m.Version != i+1 {
			t.Errorf("migration %q at position %d has version %d, want %d", m.Name, i, m.Version, i+1)
		}
	}
}
