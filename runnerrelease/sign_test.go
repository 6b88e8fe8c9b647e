package runnerrelease

import (
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// A key made by GenerateKey, read back from its PEM file, signs a release
// whose signature verifies with the printed public key, and with it only.
func TestGeneratedKeySignsWhatItsPublicKeyVerifies(t *testing.T) {
	priv, pub, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "release.key")
	if err := os.WriteFile(path, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := ReadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if PublicKey(key) != pub {
		t.Fatalf("public key %s, want %s", PublicKey(key), pub)
	}
	rel := Sign(protocol.RunnerRelease{Version: "1.4.0", BinaryDigest: "sha256:" + strings.Repeat("a", 64)}, key)
	sig, _ := base64.StdEncoding.DecodeString(rel.Signature)
	raw, _ := base64.StdEncoding.DecodeString(pub)
	if !ed25519.Verify(raw, rel.SignedText(), sig) {
		t.Error("the signature does not verify with the public key")
	}
	rel.Version = "1.4.1"
	if ed25519.Verify(raw, rel.SignedText(), sig) {
		t.Error("the signature verifies for another version")
	}
	if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKey(path); err == nil || !strings.Contains(err.Error(), "not PEM") {
		t.Errorf("a file that is no key: %v", err)
	}
}

func TestCheckImageDigest(t *testing.T) {
	if err := checkImageDigest("sha256:" + strings.Repeat("0", 64)); err != nil {
		t.Error(err)
	}
	if err := checkImageDigest("latest"); err == nil || !strings.Contains(err.Error(), "image digest") {
		t.Errorf("a tag as digest: %v", err)
	}
}
