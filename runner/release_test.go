package runner

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// signRelease signs rel with key, as runnerrelease.Sign does (which the
// runner does not link).
func signRelease(rel protocol.RunnerRelease, key ed25519.PrivateKey) protocol.RunnerRelease {
	rel.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, rel.SignedText()))
	return rel
}

func TestVerifyReleaseRefusesWhatTheKeyDidNotSign(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	digest := "sha256:" + strings.Repeat("a", 64)
	m := protocol.RunnerUpdateManifest{Version: "1.4.0", BinaryDigest: digest}
	good := signRelease(protocol.RunnerRelease{Version: "1.4.0", BinaryDigest: digest, ImageDigest: "sha256:" + strings.Repeat("c", 64)}, key)
	if err := verifyRelease([]ed25519.PublicKey{pub}, m, good); err != nil {
		t.Fatalf("a release signed with the trusted key: %v", err)
	}
	tamperedImage := good
	tamperedImage.ImageDigest = "sha256:" + strings.Repeat("d", 64)
	for name, tc := range map[string]struct {
		keys []ed25519.PublicKey
		m    protocol.RunnerUpdateManifest
		rel  protocol.RunnerRelease
		want string
	}{
		"no key":         {nil, m, good, "trusts no release key"},
		"unsigned":       {[]ed25519.PublicKey{pub}, m, protocol.RunnerRelease{Version: "1.4.0", BinaryDigest: digest}, "runner 1.4.0 is not signed"},
		"other key":      {[]ed25519.PublicKey{pub}, m, signRelease(good, other), "does not verify with the release keys this runner trusts (" + KeyID(pub) + ")"},
		"image swapped":  {[]ed25519.PublicKey{pub}, m, tamperedImage, "does not verify"},
		"other version":  {[]ed25519.PublicKey{pub}, protocol.RunnerUpdateManifest{Version: "1.5.0", BinaryDigest: digest}, good, "the signed release is runner 1.4.0, not 1.5.0"},
		"other binary":   {[]ed25519.PublicKey{pub}, protocol.RunnerUpdateManifest{Version: "1.4.0", BinaryDigest: "sha256:" + strings.Repeat("b", 64)}, good, "the signed binary of runner 1.4.0 is"},
		"bad base64 sig": {[]ed25519.PublicKey{pub}, m, protocol.RunnerRelease{Version: "1.4.0", BinaryDigest: digest, Signature: "%%"}, "not base64"},
	} {
		if err := verifyRelease(tc.keys, tc.m, tc.rel); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func TestParseReleaseKeysNamesTheBadKey(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(nil)
	b := base64.StdEncoding.EncodeToString(pub)
	if keys, err := ParseReleaseKeys(b + ", " + b); err != nil || len(keys) != 2 {
		t.Fatalf("two keys: %d, %v", len(keys), err)
	}
	if _, err := ParseReleaseKeys(b + ",bm90IGEga2V5"); err == nil || !strings.Contains(err.Error(), "release key 2") {
		t.Errorf("a short key: %v, want it named", err)
	}
}

func TestParseJobUsers(t *testing.T) {
	if _, err := parseJobUsers("0"); err == nil || !strings.Contains(err.Error(), "job user") {
		t.Errorf("uid 0: %v", err)
	}
	for _, bad := range []string{"", "x", "10-5", "100:", "100-200:x"} {
		if _, err := parseJobUsers(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// A runner that rolls its Deployment refuses a signed release without an
// image digest at once, saying so, instead of holding it for the customer
// and failing only once accepted.
func TestDeploymentRunnerRefusesAReleaseWithoutImageDigestBeforeHoldingIt(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(nil)
	digest := "sha256:" + strings.Repeat("a", 64)
	m := protocol.RunnerUpdateManifest{Version: "1.4.0", BinaryDigest: digest}
	r := &Runner{cfg: Config{Deployment: "outpost/outpost-runner", releaseKeys: []ed25519.PublicKey{pub}},
		release: signRelease(protocol.RunnerRelease{Version: "1.4.0", BinaryDigest: digest}, key)}
	if r.holdsBack(context.Background(), m) {
		t.Fatal("the release without an image digest was held for the customer")
	}
	if why := r.refuseRelease(m, r.release); !strings.Contains(why, "names no image digest") {
		t.Errorf("refused: %q, want the missing image digest named", why)
	}
	r.release.ImageDigest = "sha256:" + strings.Repeat("c", 64)
	if why := r.unusable(m, signRelease(r.release, key)); why != "" {
		t.Errorf("a release with its image digest: %q", why)
	}
}
