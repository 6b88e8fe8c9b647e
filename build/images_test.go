package build_test

import (
	"context"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/seal"
	"github.com/outpost-dev/outpost/store/storetest"
)

// nonRoot is the user both images run as (the runner chart's runAsUser).
const nonRoot = "65532:65532"

func TestImagesRunAsNonRootWithTheirLabels(t *testing.T) {
	im := buildImages(t)
	for _, tc := range []struct{ image, entrypoint string }{
		{im.control, "/usr/local/bin/outpost"},
		{im.runner, "/usr/local/bin/outpost-runner"},
	} {
		c := inspect(t, tc.image)
		if c.User != nonRoot {
			t.Errorf("%s runs as %q, want %s", tc.image, c.User, nonRoot)
		}
		if len(c.Entrypoint) != 1 || c.Entrypoint[0] != tc.entrypoint {
			t.Errorf("%s: entrypoint %v, want %s", tc.image, c.Entrypoint, tc.entrypoint)
		}
		l := c.Labels
		if l["org.opencontainers.image.source"] != "https://github.com/outpost-dev/outpost" ||
			l["org.opencontainers.image.version"] != im.version {
			t.Errorf("%s: labels %v", tc.image, l)
		}
	}
	if got := inspect(t, im.control).Labels["org.opencontainers.image.licenses"]; got != "Apache-2.0" {
		t.Errorf("the control plane image's licence label is %q, want Apache-2.0 (LICENSE)", got)
	}
	if got := inspect(t, im.runner).Labels["org.opencontainers.image.licenses"]; got != "Apache-2.0 AND MPL-2.0" {
		t.Errorf("the runner image's licence label is %q, want Apache-2.0 AND MPL-2.0 (terraform's)", got)
	}

	// Inside the runner: the user, a shell, CA certificates, a writable home.
	got := docker(t, "run", "--rm", "--entrypoint", "/bin/sh", im.runner, "-c",
		`id -u; id -g; test -s /etc/ssl/certs/ca-certificates.crt && echo ca; touch "$HOME/x" && echo home`)
	if got != "65532\n65532\nca\nhome\n" {
		t.Errorf("in the runner image: %q; want uid and gid 65532, CA certificates and a writable $HOME", got)
	}
}

func TestRunnerImageHoldsItsTools(t *testing.T) {
	im := buildImages(t)
	for _, tc := range []struct{ cmd, want string }{
		{"outpost-runner version", "outpost-runner " + im.version + " "},
		{"outpost-runner-helm version", "outpost-runner-helm " + im.version + " "},
		{"terraform version", "Terraform v1.5.7\n"},
		{"head -n 3 /usr/share/doc/terraform/LICENSE", "Mozilla Public License"},
		{"head -n 3 /usr/share/doc/outpost/LICENSE", "Apache License"},
	} {
		got := docker(t, "run", "--rm", "--entrypoint", "/bin/sh", im.runner, "-c", tc.cmd)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q; want %q in it", tc.cmd, got, tc.want)
		}
	}
}

func TestControlPlaneImageMigratesAndCreatesAnOrg(t *testing.T) {
	im := buildImages(t)
	db := storetest.NewPostgresDatabase(t)
	kek := seal.GenerateKeyText()
	keys, err := seal.ParseLocalKey(kek)
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		return docker(t, append([]string{"run", "--rm", "--network", "host", "-e", "DATABASE_URL=" + db, "-e", "OUTPOST_KEK=" + kek, im.control}, args...)...)
	}
	if got := run("version"); got != im.version+"\n" {
		t.Errorf("outpost version: %q, want %s", got, im.version)
	}
	if got := run("migrate"); !strings.HasPrefix(got, "database (postgres) at schema version ") {
		t.Errorf("outpost migrate: %q", got)
	}
	tok := strings.TrimSpace(run("org", "create", "images"))

	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{DatabaseURL: db, Keys: &seal.Keyring{Current: keys}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AuthenticateAPIToken(ctx, tok); err != nil {
		t.Errorf("the token org create printed (%q) does not authenticate: %v", tok, err)
	}
}
