package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
)

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewID returns a random ID with a readable type prefix, e.g. "ins_3k…".
func NewID(prefix string) string {
	return prefix + "_" + randomString(10)
}

// newToken returns a 32-byte random secret with the given prefix.
func newToken(prefix string) string {
	return prefix + randomString(32)
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return idEncoding.EncodeToString(b)
}

// HashToken is how every token is stored: tokens are 256-bit random values, so
// a plain SHA-256 is enough (no password hashing needed) and lets us look a
// token up by its hash.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
