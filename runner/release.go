package runner

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/outpost-dev/outpost/protocol"
)

// ReleaseKeys are the public ed25519 keys (base64, comma-separated) whose
// signatures on a release the runner trusts, set at build time with
// -ldflags "-X github.com/outpost-dev/outpost/runner.ReleaseKeys=…".
// Config.ReleaseKeys, which only the customer sets, replaces them.
var ReleaseKeys = ""

// ParseReleaseKeys reads comma-separated base64 ed25519 public keys; its
// errors name the key by its position.
func ParseReleaseKeys(s string) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	for i, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(k)
		if err != nil || len(b) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("release key %d: want the base64 of a %d-byte ed25519 public key", i+1, ed25519.PublicKeySize)
		}
		keys = append(keys, ed25519.PublicKey(b))
	}
	return keys, nil
}

// KeyID is a short name of a key for messages: its first 8 base64 characters.
func KeyID(k ed25519.PublicKey) string {
	return base64.StdEncoding.EncodeToString(k)[:8]
}

// verifyRelease checks that rel is signed by one of keys and is the update
// m names. Its error says why the runner refuses the release.
func verifyRelease(keys []ed25519.PublicKey, m protocol.RunnerUpdateManifest, rel protocol.RunnerRelease) error {
	if len(keys) == 0 {
		return errors.New("this runner trusts no release key (built without one, and none given with --release-key): it cannot verify a release")
	}
	if rel.Signature == "" {
		return fmt.Errorf("runner %s is not signed", m.Version)
	}
	sig, err := base64.StdEncoding.DecodeString(rel.Signature)
	if err != nil {
		return fmt.Errorf("runner %s: the signature is not base64", m.Version)
	}
	ok := false
	for _, k := range keys {
		ok = ok || ed25519.Verify(k, rel.SignedText(), sig)
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = KeyID(k)
	}
	switch {
	case !ok:
		return fmt.Errorf("the signature of runner %s (binary %s, image %s) does not verify with the release keys this runner trusts (%s)",
			rel.Version, rel.BinaryDigest, orNone(rel.ImageDigest), strings.Join(names, ", "))
	case rel.Version != m.Version:
		return fmt.Errorf("the signed release is runner %s, not %s", rel.Version, m.Version)
	case rel.BinaryDigest != m.BinaryDigest:
		return fmt.Errorf("the signed binary of runner %s is %s, not %s", m.Version, rel.BinaryDigest, m.BinaryDigest)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
