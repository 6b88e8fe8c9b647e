package store

import (
	"context"
	"fmt"
	"time"
)

// CheckKeys checks that every data key is wrapped by a configured
// key-encryption key that unwraps it, and says which one is missing or
// wrong: a process started with the wrong key stops at once rather than
// failing on each secret it reads.
func (s *Store) CheckKeys(ctx context.Context) error {
	db := s.db.WithContext(ctx)
	if !db.Migrator().HasTable(&DataKey{}) {
		return nil // a database not migrated yet: nothing sealed
	}
	var kekIDs []string
	if err := db.Model(&DataKey{}).Distinct("kek_id").Order("kek_id").Pluck("kek_id", &kekIDs).Error; err != nil {
		return fmt.Errorf("store: check keys: %w", err)
	}
	for _, id := range kekIDs {
		var row DataKey
		if err := db.Where("kek_id = ?", id).Order("id").Take(&row).Error; err != nil {
			return fmt.Errorf("store: check keys: %w", err)
		}
		if _, err := s.keys.unwrap(ctx, row); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	return nil
}

// RotateKeys re-wraps every data key not wrapped by the current
// key-encryption key under it, and returns how many it re-wrapped. Sealed
// values do not change, and readers go on: each data key is re-wrapped in one
// update, and both keys unwrap it until the old key is dropped.
func (s *Store) RotateKeys(ctx context.Context) (int, error) {
	current := s.keys.ring.Current
	db := s.db.WithContext(ctx)
	n := 0
	for {
		var rows []DataKey
		if err := db.Where("kek_id <> ?", current.ID()).Order("id").Limit(100).Find(&rows).Error; err != nil {
			return n, fmt.Errorf("rotate keys: %w", err)
		}
		if len(rows) == 0 {
			return n, nil
		}
		for _, row := range rows {
			if err := s.rewrap(ctx, row); err != nil {
				return n, err
			}
			n++
		}
	}
}

func (s *Store) rewrap(ctx context.Context, row DataKey) error {
	key, err := s.keys.unwrap(ctx, row)
	if err != nil {
		return fmt.Errorf("rotate keys: %w", err)
	}
	current := s.keys.ring.Current
	wrapped, err := current.Wrap(ctx, key)
	if err != nil {
		return fmt.Errorf("rotate keys: wrap data key %s with %s: %w", row.ID, current.ID(), err)
	}
	// Only if no one re-wrapped it meanwhile (another rotate).
	res := update(s.db.WithContext(ctx).Where("id = ? AND kek_id = ?", row.ID, row.KEKID),
		&DataKey{KEKID: current.ID(), Wrapped: wrapped, UpdatedAt: time.Now().UTC()}, "KEKID", "Wrapped", "UpdatedAt")
	if res.Error != nil {
		return fmt.Errorf("rotate keys: data key %s: %w", row.ID, res.Error)
	}
	return nil
}

// KeyStatus counts the data keys by the key-encryption key that wraps them.
func (s *Store) KeyStatus(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		KEKID string
		N     int
	}
	err := s.db.WithContext(ctx).Model(&DataKey{}).Select("kek_id, COUNT(*) AS n").Group("kek_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("key status: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.KEKID] = r.N
	}
	return out, nil
}
