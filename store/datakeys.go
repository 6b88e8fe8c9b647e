package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/store/seal"
)

// DataKey is one install's (or org's) data key, wrapped by a key-encryption
// key. Values are sealed with the data key; rotating the key-encryption key
// re-wraps the data keys and leaves the values as they are.
type DataKey struct {
	ID string `gorm:"primaryKey;size:32"`
	// Scope is the install ID, or the org ID for what belongs to no install
	// (build jobs, terraform states).
	Scope     string `gorm:"size:40;not null;uniqueIndex"`
	KEKID     string `gorm:"column:kek_id;size:200;not null;index"`
	Wrapped   []byte `gorm:"not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableName keeps the table's name by what it holds.
func (DataKey) TableName() string { return "data_keys" }

// dataKeys unwraps data keys with the configured keys and keeps them, by ID
// and by scope, in memory. It is a gorm plugin so that the models' hooks
// find it on their *gorm.DB.
type dataKeys struct {
	ring    *seal.Keyring
	mu      sync.RWMutex
	byID    map[string][]byte
	byScope map[string]string
}

const dataKeysPlugin = "outpost:data-keys"

func newDataKeys(ring *seal.Keyring) *dataKeys {
	return &dataKeys{ring: ring, byID: map[string][]byte{}, byScope: map[string]string{}}
}

func (*dataKeys) Name() string              { return dataKeysPlugin }
func (*dataKeys) Initialize(*gorm.DB) error { return nil }

func keysOf(tx *gorm.DB) (*dataKeys, error) {
	if k, ok := tx.Config.Plugins[dataKeysPlugin].(*dataKeys); ok {
		return k, nil
	}
	return nil, errors.New("store: no data keys (a store opened without key-encryption keys)")
}

// inTx says whether tx runs in a transaction: a data key read or created
// there may yet be rolled back, so it is not kept.
func inTx(tx *gorm.DB) bool {
	_, ok := tx.Statement.ConnPool.(gorm.TxCommitter)
	return ok
}

func (d *dataKeys) cached(id string) ([]byte, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	k, ok := d.byID[id]
	return k, ok
}

func (d *dataKeys) remember(tx *gorm.DB, row DataKey, key []byte) {
	if inTx(tx) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byID[row.ID], d.byScope[row.Scope] = key, row.ID
}

// forScope returns the scope's data key, created (in tx) if it has none.
func (d *dataKeys) forScope(tx *gorm.DB, scope string) (string, []byte, error) {
	d.mu.RLock()
	id, ok := d.byScope[scope]
	key := d.byID[id]
	d.mu.RUnlock()
	if ok {
		return id, key, nil
	}
	db := tx.Session(&gorm.Session{NewDB: true})
	var rows []DataKey
	if err := db.Where("scope = ?", scope).Limit(1).Find(&rows).Error; err != nil {
		return "", nil, fmt.Errorf("read data key of %s: %w", scope, err)
	}
	if len(rows) == 0 {
		wrapped, err := d.ring.Current.Wrap(tx.Statement.Context, seal.NewDataKey())
		if err != nil {
			return "", nil, fmt.Errorf("wrap a data key with %s: %w", d.ring.Current.ID(), err)
		}
		now := time.Now().UTC()
		row := DataKey{ID: NewID("dk"), Scope: scope, KEKID: d.ring.Current.ID(), Wrapped: wrapped, CreatedAt: now, UpdatedAt: now}
		if err := db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "scope"}}, DoNothing: true}).Create(&row).Error; err != nil {
			return "", nil, fmt.Errorf("create data key of %s: %w", scope, err)
		}
		if err := db.Where("scope = ?", scope).Limit(1).Find(&rows).Error; err != nil || len(rows) == 0 {
			return "", nil, errors.Join(fmt.Errorf("read data key of %s", scope), err)
		}
	}
	key, err := d.unwrap(tx.Statement.Context, rows[0])
	if err != nil {
		return "", nil, err
	}
	d.remember(tx, rows[0], key)
	return rows[0].ID, key, nil
}

// byKeyID returns the data key of that ID.
func (d *dataKeys) byKeyID(tx *gorm.DB, id string) ([]byte, error) {
	if key, ok := d.cached(id); ok {
		return key, nil
	}
	var row DataKey
	if err := tx.Session(&gorm.Session{NewDB: true}).Where("id = ?", id).Take(&row).Error; err != nil {
		return nil, notFound(err, "data key "+id)
	}
	key, err := d.unwrap(tx.Statement.Context, row)
	if err != nil {
		return nil, err
	}
	d.remember(tx, row, key)
	return key, nil
}

func (d *dataKeys) unwrap(ctx context.Context, row DataKey) ([]byte, error) {
	key, err := d.ring.Unwrap(ctx, row.KEKID, row.Wrapped)
	if err != nil {
		return nil, fmt.Errorf("data key %s: %w", row.ID, err)
	}
	return key, nil
}
