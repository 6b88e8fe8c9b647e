package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Registry signing keys. Each org has its own keys, and the platform (what
// belongs to no org: runner releases) its own; they sign the vendor
// registry's credentials, the attempt credentials' placeholders and the
// per-attempt state credentials, each of which carries the ID of the key
// that signed it. An owner signs with its newest key (created on first
// use); RotateSigningKey makes a new one, and a credential signed with an
// older key verifies until RetireSigningKey retires that key. Keys are
// sealed at rest with their owner's data key.

// PlatformKeys owns the keys that sign what belongs to no org.
const PlatformKeys = "platform"

// LegacyKeyID is the key all orgs shared before keys per org (it was
// settings.registry_signing_key, in clear): Migrate moves it here, sealed.
// Credentials without a key ID are checked against it until it is retired.
const LegacyKeyID = "legacy"

// settingRegistryKey is where the legacy key was kept.
const settingRegistryKey = "registry_signing_key"

// RegistryKey is one signing key's row; Secret is sealed at rest.
type RegistryKey struct {
	ID string `gorm:"primaryKey;size:32" json:"id"`
	// Owner is the org ID, PlatformKeys, or "" for the legacy key.
	Owner     string     `gorm:"size:40;not null;index" json:"owner"`
	Secret    string     `gorm:"type:text;not null" json:"-"`
	CreatedAt time.Time  `json:"created_at"`
	RetiredAt *time.Time `json:"retired_at,omitempty"`
}

// SigningKey is a key to sign or verify with.
type SigningKey struct {
	ID     string
	Owner  string // an org ID, PlatformKeys, or "" (the legacy key, of no one)
	Secret []byte
}

func (k *RegistryKey) sealed(tx *gorm.DB, open bool) error {
	scope := k.Owner
	if scope == "" {
		scope = PlatformKeys
	}
	return sealFields(tx, scope, open, map[string]*string{"registry_keys.secret/" + k.ID: &k.Secret})
}

// BeforeCreate seals the key.
func (k *RegistryKey) BeforeCreate(tx *gorm.DB) error { return k.sealed(tx, false) }

// AfterCreate gives the caller its key back.
func (k *RegistryKey) AfterCreate(tx *gorm.DB) error { return k.sealed(tx, true) }

// AfterFind opens the key read.
func (k *RegistryKey) AfterFind(tx *gorm.DB) error { return k.sealed(tx, true) }

func (k RegistryKey) signing() (SigningKey, error) {
	secret, err := base64.RawStdEncoding.DecodeString(k.Secret)
	if err != nil {
		return SigningKey{}, fmt.Errorf("signing key %s: %w", k.ID, err)
	}
	return SigningKey{ID: k.ID, Owner: k.Owner, Secret: secret}, nil
}

// SigningKey returns the owner's (an org ID, or PlatformKeys) current key:
// its newest not retired, created on first use.
func (s *Store) SigningKey(ctx context.Context, owner string) (SigningKey, error) {
	if owner == "" {
		return SigningKey{}, errors.New("signing key: no owner")
	}
	for range 2 {
		var rows []RegistryKey
		err := s.db.WithContext(ctx).Where("owner = ? AND retired_at IS NULL", owner).Order("created_at DESC, id DESC").Limit(1).Find(&rows).Error
		if err != nil {
			return SigningKey{}, fmt.Errorf("signing key of %s: %w", owner, err)
		}
		if len(rows) > 0 {
			return rows[0].signing()
		}
		// The first key has an ID of the owner's, so processes that make
		// it at once (the gateway, a worker) make one: the one stored first.
		if _, err := s.newSigningKey(ctx, owner, firstKeyID(owner)); err != nil {
			return SigningKey{}, err
		}
	}
	return SigningKey{}, fmt.Errorf("signing key of %s: every key is retired: %w", owner, ErrNotFound)
}

// firstKeyID is the ID of an owner's first key.
func firstKeyID(owner string) string {
	sum := sha256.Sum256([]byte("outpost first signing key\x00" + owner))
	return "rk_" + hex.EncodeToString(sum[:])[:20]
}

// RotateSigningKey makes a new current key for the owner. Credentials
// signed with its older keys keep verifying until those are retired.
func (s *Store) RotateSigningKey(ctx context.Context, owner string) (SigningKey, error) {
	return s.newSigningKey(ctx, owner, NewID("rk"))
}

// newSigningKey stores a new key of the owner (nothing when its ID exists).
func (s *Store) newSigningKey(ctx context.Context, owner, id string) (SigningKey, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return SigningKey{}, err
	}
	row := RegistryKey{ID: id, Owner: owner, Secret: base64.RawStdEncoding.EncodeToString(raw), CreatedAt: s.now()}
	if err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return SigningKey{}, fmt.Errorf("signing key of %s: %w", owner, err)
	}
	return row.signing()
}

// SigningKeyByID returns the key of that ID ("" is the legacy key), if it
// is not retired: the key a credential names. Otherwise ErrNotFound.
func (s *Store) SigningKeyByID(ctx context.Context, id string) (SigningKey, error) {
	if id == "" {
		id = LegacyKeyID
	}
	row, err := first[RegistryKey](s.db.WithContext(ctx), "signing key "+id, "id = ? AND retired_at IS NULL", id)
	if err != nil {
		return SigningKey{}, err
	}
	return row.signing()
}

// VerifyingKeys are the keys a credential of the owner may be signed with:
// the owner's keys not retired, and the legacy key if it is not.
func (s *Store) VerifyingKeys(ctx context.Context, owner string) ([]SigningKey, error) {
	var rows []RegistryKey
	err := s.db.WithContext(ctx).Where("(owner = ? OR id = ?) AND retired_at IS NULL", owner, LegacyKeyID).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("signing keys of %s: %w", owner, err)
	}
	out := make([]SigningKey, len(rows))
	for i, r := range rows {
		if out[i], err = r.signing(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ListSigningKeys lists the owner's keys ("" lists the legacy key), newest
// first, without their secrets.
func (s *Store) ListSigningKeys(ctx context.Context, owner string) ([]RegistryKey, error) {
	return list[RegistryKey](s.db.WithContext(ctx).Omit("secret"), "created_at DESC, id DESC", "owner = ?", owner)
}

// RetireSigningKey retires a key: credentials it signed no longer verify.
// An owner's current key cannot be retired (rotate first): ErrConflict.
func (s *Store) RetireSigningKey(ctx context.Context, id string) error {
	db := s.db.WithContext(ctx)
	row, err := first[RegistryKey](db.Omit("secret"), "signing key "+id, "id = ? AND retired_at IS NULL", id)
	if err != nil {
		return err
	}
	if row.Owner != "" {
		var newer int64
		if err := db.Model(&RegistryKey{}).Where("owner = ? AND retired_at IS NULL AND id <> ?", row.Owner, id).Count(&newer).Error; err != nil {
			return err
		}
		if newer == 0 {
			return fmt.Errorf("signing key %s is %s's current key: rotate first: %w", id, row.Owner, ErrConflict)
		}
	}
	return db.Model(&RegistryKey{}).Where("id = ?", id).Update("retired_at", s.now()).Error
}

// sealLegacyKey moves the key all orgs shared (settings, in clear) to
// registry_keys, sealed, as LegacyKeyID (Migrate runs it). Concurrent
// starts move it once.
func (s *Store) sealLegacyKey(ctx context.Context) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var st []Setting
		if err := tx.Where("name = ?", settingRegistryKey).Find(&st).Error; err != nil || len(st) == 0 {
			return err
		}
		res := tx.Where("name = ? AND value = ?", settingRegistryKey, st[0].Value).Delete(&Setting{})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error // another process moved it
		}
		row := RegistryKey{ID: LegacyKeyID, Secret: st[0].Value, CreatedAt: s.now()}
		return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error
	})
}
