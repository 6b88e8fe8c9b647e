package seal

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Prefix starts every sealed value (format version 1).
const Prefix = "osv1:"

// ErrTampered: a sealed value does not open under its key and associated
// data (changed, or moved from another row).
var ErrTampered = errors.New("sealed value does not open: changed or moved from another row")

// IsSealed says whether v is a sealed value (not plaintext).
func IsSealed(v string) bool { return strings.HasPrefix(v, Prefix) }

// KeyID returns the ID of the data key that sealed v.
func KeyID(v string) (string, error) {
	id, _, ok := strings.Cut(strings.TrimPrefix(v, Prefix), ":")
	if !IsSealed(v) || !ok || id == "" {
		return "", fmt.Errorf("not a sealed value: %w", ErrTampered)
	}
	return id, nil
}

// Seal seals plaintext with the data key keyID; aad binds it to its place.
func Seal(dataKey []byte, keyID string, aad, plaintext string) (string, error) {
	aead, err := newGCM(dataKey)
	if err != nil {
		return "", err
	}
	nonce := randomBytes(aead.NonceSize())
	ct := aead.Seal(nonce, nonce, []byte(plaintext), []byte(aad))
	return Prefix + keyID + ":" + base64.StdEncoding.EncodeToString(ct), nil
}

// Open opens a sealed value with its data key and associated data.
func Open(dataKey []byte, sealed, aad string) (string, error) {
	id, err := KeyID(sealed)
	if err != nil {
		return "", err
	}
	ct, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, Prefix+id+":"))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrTampered, err)
	}
	aead, err := newGCM(dataKey)
	if err != nil {
		return "", err
	}
	n := aead.NonceSize()
	if len(ct) < n {
		return "", ErrTampered
	}
	pt, err := aead.Open(nil, ct[:n], ct[n:], []byte(aad))
	if err != nil {
		return "", ErrTampered
	}
	return string(pt), nil
}
