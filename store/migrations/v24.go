package migrations

import (
	"time"
)

// v24 keeps the keys that sign the vendor registry's credentials and the
// attempt credentials: one set per org (and the platform's), each key with
// an ID the credentials it signs carry, sealed at rest. (The key all orgs
// shared before, settings.registry_signing_key, is moved here and sealed
// after the migrations, by the store, which holds the key-encryption keys.)
// It also marks the log chunks it seals (a debug command's output).
var v24 = steps(
	create(&v24RegistryKey{}),
	add("job_log_chunks", &v24JobLogChunk{}, "Sealed"),
)

// v24JobLogChunk is the column v24 adds to job_log_chunks.
type v24JobLogChunk struct {
	Sealed bool `gorm:"not null;default:false"`
}

// v24RegistryKey is the registry_keys table.
type v24RegistryKey struct {
	ID        string `gorm:"primaryKey;size:32"`
	Owner     string `gorm:"size:40;not null;index"`
	Secret    string `gorm:"type:text;not null"`
	CreatedAt time.Time
	RetiredAt *time.Time
}

func (v24RegistryKey) TableName() string { return "registry_keys" }
