package migrations

import (
	"time"
)

// v16 keeps the data keys that seal secrets at rest, wrapped by a
// key-encryption key. (Existing plaintext values are sealed after the
// migrations, by the store, which holds the keys.)
var v16 = steps(
	create(&v16DataKey{}),
)

// v16DataKey is the data_keys table.
type v16DataKey struct {
	ID        string `gorm:"primaryKey;size:32"`
	Scope     string `gorm:"size:40;not null;uniqueIndex"`
	KEKID     string `gorm:"column:kek_id;size:200;not null;index"`
	Wrapped   []byte `gorm:"not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (v16DataKey) TableName() string { return "data_keys" }
