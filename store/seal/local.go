package seal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the size of a local key and of a data key: AES-256.
const KeySize = 32

// LocalKey is a key-encryption key held in memory: 32 bytes from a file or
// an environment variable. Its ID is "local-" and the first 16 hex digits of
// the key's SHA-256, so a wrong key shows as another ID.
type LocalKey struct {
	id   string
	aead cipher.AEAD
}

// NewLocalKey makes a local key of 32 bytes.
func NewLocalKey(key []byte) (*LocalKey, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: a key-encryption key is %d bytes, not %d", KeySize, len(key))
	}
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(key)
	return &LocalKey{id: "local-" + hex.EncodeToString(sum[:8]), aead: aead}, nil
}

// ParseLocalKey reads a key in its text form: base64 of 32 bytes.
func ParseLocalKey(text string) (*LocalKey, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil {
		return nil, fmt.Errorf("seal: a key-encryption key is base64 of %d bytes: %w", KeySize, err)
	}
	return NewLocalKey(b)
}

// LoadLocalKey reads a key file (its text form).
func LoadLocalKey(path string) (*LocalKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("seal: read key-encryption key: %w", err)
	}
	k, err := ParseLocalKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// GenerateKeyText returns a new random key in its text form.
func GenerateKeyText() string {
	return base64.StdEncoding.EncodeToString(randomBytes(KeySize)) + "\n"
}

// LoadOrCreateLocalKey reads the key file, first writing a new key there
// (mode 0600) when there is none; created says it did.
func LoadOrCreateLocalKey(path string) (k *LocalKey, created bool, err error) {
	return LoadOrWriteLocalKey(path, GenerateKeyText())
}

// LoadOrWriteLocalKey reads the key file, first writing text there (a key in
// its text form; mode 0600) when there is none; written says it did. A key
// already in the file is kept, whatever text holds.
func LoadOrWriteLocalKey(path, text string) (k *LocalKey, written bool, err error) {
	if _, err := ParseLocalKey(text); err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("seal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, os.ErrExist):
		k, err = LoadLocalKey(path)
		return k, false, err
	case err != nil:
		return nil, false, fmt.Errorf("seal: create key-encryption key: %w", err)
	}
	_, err = f.WriteString(strings.TrimSpace(text) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, false, fmt.Errorf("seal: write key-encryption key: %w", err)
	}
	k, err = LoadLocalKey(path)
	return k, true, err
}

// ID names the key.
func (k *LocalKey) ID() string { return k.id }

// Wrap seals a data key.
func (k *LocalKey) Wrap(_ context.Context, dataKey []byte) ([]byte, error) {
	nonce := randomBytes(k.aead.NonceSize())
	return k.aead.Seal(nonce, nonce, dataKey, []byte("outpost data key "+k.id)), nil
}

// Unwrap opens a wrapped data key; a key that does not open it is
// ErrWrongKEK.
func (k *LocalKey) Unwrap(_ context.Context, wrapped []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(wrapped) < n {
		return nil, fmt.Errorf("wrapped data key is %d bytes: %w", len(wrapped), ErrWrongKEK)
	}
	dk, err := k.aead.Open(nil, wrapped[:n], wrapped[n:], []byte("outpost data key "+k.id))
	if err != nil {
		return nil, ErrWrongKEK
	}
	return dk, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return cipher.NewGCM(block)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("seal: no randomness: " + err.Error())
	}
	return b
}

// NewDataKey returns a fresh random data key.
func NewDataKey() []byte { return randomBytes(KeySize) }
