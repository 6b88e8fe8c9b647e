package runnerrelease

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/outpost-dev/outpost/protocol"
)

// A release is signed where the vendor builds it, with a private key the
// control plane never holds: a compromised control plane can then point an
// install's runner at any artifact, but no runner switches to one whose
// signature does not verify with the public key built into it
// (docs/SECURITY.md).

var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Sign returns rel with its signature made with key.
func Sign(rel protocol.RunnerRelease, key ed25519.PrivateKey) protocol.RunnerRelease {
	rel.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, rel.SignedText()))
	return rel
}

// GenerateKey makes a release key pair: the private key as PEM (PKCS #8,
// as `openssl genpkey -algorithm ed25519` writes it) and the public key as
// the base64 the runner takes (runner.ReleaseKeys, --release-key).
func GenerateKey() (privatePEM []byte, public string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, "", err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), base64.StdEncoding.EncodeToString(pub), nil
}

// PublicKey is the base64 public key of a private key.
func PublicKey(key ed25519.PrivateKey) string {
	return base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
}

// ReadKey reads an ed25519 private key from a PEM (PKCS #8) file.
func ReadKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("signing key %s: not PEM", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New("signing key " + path + ": not an ed25519 key")
	}
	return priv, nil
}

// checkImageDigest says whether d can be a runner image's digest.
func checkImageDigest(d string) error {
	if d != "" && !digestPattern.MatchString(d) {
		return fmt.Errorf("image digest %q: want sha256: and 64 lowercase hex digits", d)
	}
	return nil
}
