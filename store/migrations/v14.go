package migrations

import (
	"time"

	"gorm.io/gorm"
)

// v14 keeps the data keys that seal secrets at rest, wrapped by a
// key-encryption key. (Existing plaintext values are sealed after the
// migrations, by the store, which holds the keys.)
func v14(tx *gorm.DB) error {
	return tx.Migrator().CreateTable(&v14DataKey{})
}

// v14DataKey is the data_keys table.
type v14DataKey struct {
	ID        string `gorm:"primaryKey;size:32"`
	Scope     string `gorm:"size:40;not null;uniqueIndex"`
	KEKID     string `gorm:"column:kek_id;size:200;not null;index"`
	Wrapped   []byte `gorm:"not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (v14DataKey) TableName() string { return "data_keys" }
