package store

import "context"

// MigrateTo applies the migrations not yet applied up to version, as a
// release that ended at that version would.
func (s *Store) MigrateTo(ctx context.Context, version int) error { return s.migrateTo(ctx, version) }
