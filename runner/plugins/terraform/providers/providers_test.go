package providers_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil/terraformtest"
	"github.com/outpost-dev/outpost/runner/plugins/terraform/providers"
)

func mirrorConfig(t *testing.T) string {
	return terraformtest.FakeProviderMirror(t, providers.Platform)
}

func vendor(t *testing.T, bin, rc, module string) providers.Vendored {
	t.Helper()
	return vendorFor(t, bin, rc, module, []string{providers.Platform})
}

func vendorFor(t *testing.T, bin, rc, module string, platforms []string) providers.Vendored {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(module), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	env := providers.TerraformEnv([]string{"PATH=" + os.Getenv("PATH"), "TF_CLI_CONFIG_FILE=" + rc}, "")
	v, err := providers.Vendor(context.Background(), bin, dir, env, platforms, &log)
	if err != nil {
		t.Fatalf("Vendor: %v\n%s", err, log.String())
	}
	return v
}

// The build packs what the mirror gave, the same bytes each time; the
// install initialises from the layer alone, with an empty CLI
// configuration and every request outside the machine sent to a closed
// port; a runner of another platform is told the layer is not for it.
func TestVendorThenInstallFromThePluginDirOnly(t *testing.T) {
	bin, rc := terraformtest.Find(t), mirrorConfig(t)
	v := vendor(t, bin, rc, terraformtest.FakeProviderModule)
	if want := "example.com/acme/fake 1.0.0 " + providers.Platform; len(v.Providers) != 1 || v.Providers[0] != want {
		t.Fatalf("vendored %q, want [%s]", v.Providers, want)
	}
	if again := vendor(t, bin, rc, terraformtest.FakeProviderModule); !bytes.Equal(again.Layer, v.Layer) {
		t.Errorf("vendoring the same providers twice gave different layers (%d and %d bytes)", len(v.Layer), len(again.Layer))
	}

	module := t.TempDir()
	if err := os.WriteFile(filepath.Join(module, "main.tf"), []byte(terraformtest.FakeProviderModule), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := providers.Unpack(v.Layer, t.TempDir(), module, "plan9_mips"); err == nil ||
		!strings.Contains(err.Error(), "example.com/acme/fake/1.0.0 for ["+providers.Platform+"]") {
		t.Errorf("Unpack for another platform: %v, want an error naming what the layer holds", err)
	}
	plugins, err := providers.Unpack(v.Layer, t.TempDir(), module, providers.Platform)
	if err != nil {
		t.Fatal(err)
	}
	out := initOffline(t, bin, module, plugins)
	if !strings.Contains(out, "Installed example.com/acme/fake v1.0.0") {
		t.Fatalf("init -plugin-dir installed no fake provider:\n%s", out)
	}
	if !strings.Contains(out, "from the dependency lock file") {
		t.Errorf("init did not take the version from the build's lock file:\n%s", out)
	}
}

// A module with no provider to install gives no layer.
func TestVendorWithoutProviders(t *testing.T) {
	v := vendor(t, terraformtest.Find(t), mirrorConfig(t), "resource \"terraform_data\" \"x\" {}\n")
	if v.Layer != nil || v.Providers != nil {
		t.Errorf("vendored %q (%d bytes): want nothing", v.Providers, len(v.Layer))
	}
}
