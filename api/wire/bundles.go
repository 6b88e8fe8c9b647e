package wire

import "time"

// ReleaseKey is the public half of an org's release key: the ed25519 key
// that signs its release bundles. Customers trust it (outpost-runner
// offline verify --release-key); the private key never leaves the control
// plane.
type ReleaseKey struct {
	// names the key (release bundles carry it): rel_ and the first 16 hex digits of the public key's SHA-256
	KeyID     string `json:"key_id" required:"true"`
	Algorithm string `json:"algorithm" required:"true" enum:"ed25519"`
	// the raw public key (32 bytes), base64
	PublicKey string `json:"public_key" required:"true"`
	// the public key as PEM (PKIX "PUBLIC KEY"), the file outpost-runner offline verify reads
	PublicKeyPEM string    `json:"public_key_pem" required:"true"`
	CreatedAt    time.Time `json:"created_at" required:"true"`
}
