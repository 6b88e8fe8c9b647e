package store

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/releasebundle"
)

// ReleaseKey is an org's release key: the ed25519 key that signs its
// release bundles (docs/bundles.md). One per org, made on first use; the
// private key is sealed at rest with the org's data key, and never leaves
// the control plane. The public key is what the org's customers trust.
type ReleaseKey struct {
	OrgID string `gorm:"primaryKey;size:32"`
	// KeyID names the public key (releasebundle.KeyID).
	KeyID     string `gorm:"size:40;not null"`
	PublicKey string `gorm:"type:text;not null"` // base64, 32 bytes
	// PrivateKey is the ed25519 seed, base64; sealed at rest.
	PrivateKey string `gorm:"type:text;not null" json:"-"`
	CreatedAt  time.Time
}

func (k *ReleaseKey) sealed(tx *gorm.DB, open bool) error {
	return sealFields(tx, k.OrgID, open, map[string]*string{"release_keys.private_key/" + k.OrgID: &k.PrivateKey})
}

// BeforeCreate seals the private key.
func (k *ReleaseKey) BeforeCreate(tx *gorm.DB) error { return k.sealed(tx, false) }

// AfterCreate gives the caller its key back.
func (k *ReleaseKey) AfterCreate(tx *gorm.DB) error { return k.sealed(tx, true) }

// AfterFind opens the private key read.
func (k *ReleaseKey) AfterFind(tx *gorm.DB) error { return k.sealed(tx, true) }

// PublicKeyBytes decodes the public key.
func (k ReleaseKey) PublicKeyBytes() (ed25519.PublicKey, error) {
	pub, err := base64.StdEncoding.DecodeString(k.PublicKey)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("release key of %s: bad public key", k.OrgID)
	}
	return pub, nil
}

// Keys decodes the key pair.
func (k ReleaseKey) Keys() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	pub, err := k.PublicKeyBytes()
	if err != nil {
		return nil, nil, err
	}
	seed, err := base64.StdEncoding.DecodeString(k.PrivateKey)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, nil, fmt.Errorf("release key of %s: bad private key", k.OrgID)
	}
	return pub, ed25519.NewKeyFromSeed(seed), nil
}

// ReleaseKey returns the org's release key, made on first use (created
// says this call made it). Processes that make it at once get the one
// stored first.
func (s *Store) ReleaseKey(ctx context.Context, orgID string) (k ReleaseKey, created bool, err error) {
	db := s.db.WithContext(ctx)
	k, err = first[ReleaseKey](db, "release key of "+orgID, "org_id = ?", orgID)
	if !errors.Is(err, ErrNotFound) {
		return k, false, err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return k, false, err
	}
	k = ReleaseKey{OrgID: orgID, KeyID: releasebundle.KeyID(pub), PublicKey: base64.StdEncoding.EncodeToString(pub),
		PrivateKey: base64.StdEncoding.EncodeToString(priv.Seed()), CreatedAt: s.now()}
	res := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&k)
	if res.Error != nil {
		return k, false, fmt.Errorf("release key of %s: %w", orgID, res.Error)
	}
	if res.RowsAffected == 1 {
		return k, true, nil
	}
	k, err = first[ReleaseKey](db, "release key of "+orgID, "org_id = ?", orgID)
	return k, false, err
}

// ReleasePublicKey returns the org's release key without its private key;
// ErrNotFound when it has none yet.
func (s *Store) ReleasePublicKey(ctx context.Context, orgID string) (ReleaseKey, error) {
	return first[ReleaseKey](s.db.WithContext(ctx).Omit("private_key"), "release key of "+orgID, "org_id = ?", orgID)
}
