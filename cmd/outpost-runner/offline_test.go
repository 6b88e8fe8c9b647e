package main

import (
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/releasebundle/bundletest"
)

// offline verify exits 0 on a bundle as exported, and 1 naming what failed
// when one byte of a blob or of the signature changed.
func TestOfflineVerify(t *testing.T) {
	f := bundletest.New(t, 256<<10)
	dir := t.TempDir()
	key := f.PublicKeyFile(t, dir)
	out, errOut, code := outpostRunner(t, nil, "offline", "verify", f.Export(t, t.TempDir()), "--release-key", key)
	if code != 0 || !strings.Contains(out, "verified with release key rel_") || !strings.Contains(out, "components: network, api") {
		t.Fatalf("verify: exit %d, %q %q", code, out, errOut)
	}
	for _, tc := range []struct {
		name, after, needle, want string
		skip                      int
	}{
		{"a blob", "", string(f.Contents.ConfigArchive), "bundle refused: blob sha256:", 3},
		{"the signature", `"signature": "`, `": "`, "bundle refused: signature: ", 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := f.Export(t, t.TempDir())
			bundletest.Flip(t, path, tc.after, []byte(tc.needle), tc.skip)
			_, errOut, code := outpostRunner(t, nil, "offline", "verify", "--release-key", key, path)
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, %q; want 1 and %q", code, errOut, tc.want)
			}
		})
	}
	if _, errOut, code := outpostRunner(t, nil, "offline", "verify", "x.tar"); code != 2 || !strings.Contains(errOut, "--release-key") {
		t.Fatalf("without a key: exit %d, %q; want usage", code, errOut)
	}
}
