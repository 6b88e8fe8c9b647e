package migrations

import (
	"time"
)

// v32 keeps each org's release key: the ed25519 key that signs its release
// bundles, its private key sealed at rest with the org's data key.
var v32 = steps(
	create(&v32ReleaseKey{}),
)

// v32ReleaseKey is the release_keys table.
type v32ReleaseKey struct {
	OrgID      string `gorm:"primaryKey;size:32"`
	KeyID      string `gorm:"size:40;not null"`
	PublicKey  string `gorm:"type:text;not null"`
	PrivateKey string `gorm:"type:text;not null"`
	CreatedAt  time.Time
}

func (v32ReleaseKey) TableName() string { return "release_keys" }
