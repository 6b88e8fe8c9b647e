package e2e

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A release bundle of the demo app's real builds (the build runner's
// terraform module and chart artifacts), exported with the CLI, verifies
// with the org's release key on the runner's side, and is refused, naming
// what failed, when one byte of a build's manifest or of the signature is
// changed.
func TestReleaseBundleOfRealBuilds(t *testing.T) {
	s, c := newCLIStack(t)
	c.ok(exampleDir, "apps", "sync", ".", "--app", "demo")
	s.waitBuildsEnded()
	var list struct {
		Builds []struct{ Component, Digest string }
	}
	if s.do("GET", "/v1/apps/"+s.install.AppID+"/builds?config_version=1", nil, &list) != http.StatusOK || len(list.Builds) == 0 {
		t.Fatalf("builds of version 1: %+v", list)
	}
	dir := t.TempDir()
	bundle, key := exportBundle(c, dir)
	original, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := verifyBundle(t, bundle, key)
	if code != 0 || !strings.Contains(out, "verified with release key rel_") {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}
	for _, b := range list.Builds {
		if !strings.Contains(out, b.Component) {
			t.Errorf("verify does not list component %s:\n%s", b.Component, out)
		}
	}

	manifest := strings.TrimPrefix(list.Builds[0].Digest, "sha256:")
	for _, tc := range []struct{ name, at, want string }{
		// a tar header is 512 bytes: the blob's content follows its name's block
		{"a build's manifest", "blobs/sha256/" + manifest, "bundle refused: blob sha256:" + manifest},
		{"the signature", `"signature": "`, "bundle refused: signature: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := bytes.Clone(original)
			i := bytes.Index(data, []byte(tc.at))
			if i < 0 {
				t.Fatalf("%q not in the bundle", tc.at)
			}
			offset := i + len(tc.at) + 8
			if strings.HasPrefix(tc.at, "blobs/") {
				offset = i + 512 + 8
			}
			data[offset] ^= 0x01
			if err := os.WriteFile(bundle, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, errOut, code := verifyBundle(t, bundle, key); code != 1 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("verify of a changed bundle: exit %d, %q; want 1 and %q", code, errOut, tc.want)
			}
		})
	}
}

// verifyBundle runs outpost-runner offline verify.
func verifyBundle(t *testing.T, bundle, key string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(runnerBin, "offline", "verify", bundle, "--release-key", key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}
