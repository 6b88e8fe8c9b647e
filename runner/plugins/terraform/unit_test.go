package terraform

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
)

func TestDiagnosticsReadsBothFormats(t *testing.T) {
	plain := `
Warning: Deprecated attribute

  on main.tf line 9:

The attribute is deprecated.

Error: local-exec provisioner error

  with terraform_data.fail,
  on main.tf line 4, in resource "terraform_data" "fail":
   4:   provisioner "local-exec" {

Error running command 'exit 1': exit status 1. Output:
boom
`
	boxed := `╷
│ Error: Invalid reference
│
│   on main.tf line 3, in resource "terraform_data" "a":
│    3:   input = foo
│
│ A reference to a resource type must be followed by at least one attribute
│ access, specifying the resource name.
╵
`
	got := diagnostics(plain + boxed)
	want := []string{
		"Error: local-exec provisioner error, with terraform_data.fail (main.tf line 4): Error running command 'exit 1': exit status 1. Output: boom",
		"Error: Invalid reference (main.tf line 3): A reference to a resource type must be followed by at least one attribute access, specifying the resource name.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	err := failure("apply", errors.New("exit status 1\n"+strings.Repeat("Error: x\n\n"+strings.Repeat("detail ", 200)+"\n", 8)))
	if msg := err.Error(); !strings.HasPrefix(msg, "terraform apply failed: Error: x: detail") || !strings.Contains(msg, "and 3 more errors") || len(msg) > 3000 {
		t.Errorf("a long failure is not cut short: %d bytes: %.200s", len(msg), msg)
	}
	if msg := failure("init", errors.New("exit status 1\nsomething odd\nhappened")).Error(); msg != "terraform init failed (exit status 1): something odd happened" {
		t.Errorf("without a diagnostic: %q", msg)
	}
}

func archive(t *testing.T, hdrs ...tar.Header) []byte {
	t.Helper()
	entries := make([]testutil.TarEntry, len(hdrs))
	for i, h := range hdrs {
		entries[i] = testutil.TarEntry{Header: h, Body: "# " + h.Name + "\n"}
	}
	return testutil.TarGzEntries(t, entries...)
}

func TestExtractModuleStaysInsideItsDirectory(t *testing.T) {
	reg := func(name string, mode int64) tar.Header {
		return tar.Header{Name: name, Mode: mode, Typeflag: tar.TypeReg}
	}
	dir := filepath.Join(t.TempDir(), "module")
	ok := archive(t, tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}, reg("./main.tf", 0o644),
		reg("modules/net/main.tf", 0o644), reg("scripts/run.sh", 0o755))
	if err := extractModule(ok, dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "scripts", "run.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("the script lost its executable bit: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "modules", "net", "main.tf")); err != nil {
		t.Error(err)
	}

	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"parent":    {archive(t, reg("main.tf", 0o644), reg("../evil.tf", 0o644)), "inside the module directory"},
		"absolute":  {archive(t, reg("main.tf", 0o644), reg("/etc/evil.tf", 0o644)), "inside the module directory"},
		"symlink":   {archive(t, reg("main.tf", 0o644), tar.Header{Name: "link", Linkname: "/etc", Typeflag: tar.TypeSymlink}), "only directories and regular files"},
		"no tf":     {archive(t, reg("sub/main.tf", 0o644)), "no .tf or .tf.json file at its root"},
		"not a tgz": {[]byte("main.tf"), "not a gzipped tar archive"},
	} {
		err := extractModule(c.data, filepath.Join(t.TempDir(), "m"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}

func TestFindLooksWhereItSays(t *testing.T) {
	root := t.TempDir()
	exe := func(path string) string {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	configured := exe(filepath.Join(root, "opt", "tf"))
	onPath := exe(filepath.Join(root, "bin", "terraform"))
	tools := exe(filepath.Join(root, "repo", ToolsPath))
	deep := filepath.Join(root, "repo", "runner", "plugins")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		configured, path, dir, want string
	}{
		"configured first":   {configured, filepath.Join(root, "bin"), deep, configured},
		"then PATH":          {"", "relative:" + filepath.Join(root, "bin"), deep, onPath},
		"then the tools dir": {"", filepath.Join(root, "opt"), deep, tools},
		"configured by name": {"tf", filepath.Join(root, "opt"), "", configured},
	} {
		got, err := Find(c.configured, c.path, c.dir)
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", name, got, err, c.want)
		}
	}
	if _, err := Find(filepath.Join(root, "missing"), filepath.Join(root, "bin"), deep); err == nil {
		t.Error("a configured binary that is missing was passed over")
	}
	if _, err := Find("", filepath.Join(root, "opt"), root); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "scripts/tools.sh") {
		t.Errorf("nothing to find: %v", err)
	}
}

func TestRedactPlanJSONHidesWhatTerraformMarksSensitive(t *testing.T) {
	in := `{"variables":{"pw":{"value":"s3"},"name":{"value":"n"}},
"configuration":{"root_module":{"variables":{"pw":{"sensitive":true,"default":"s3"},"name":{"default":"n"}}}},
"resource_changes":[{"change":{"before":{"a":"s3","b":["x","s3"]},"after":{"a":"s3","b":["y","s3"],"c":"ok"},
  "before_sensitive":{"a":true,"b":[false,true]},"after_sensitive":{"a":true,"b":[false,true]}}}],
"output_changes":{"o":{"before":"s3","after":"s3","before_sensitive":true,"after_sensitive":true}},
"planned_values":{"outputs":{"o":{"sensitive":true,"value":"s3"}},"root_module":{"child_modules":[{"resources":[{"values":{"k":"s3","v":"ok"},"sensitive_values":{"k":true}}]}]}},
"prior_state":{"values":{"outputs":{"o":{"sensitive":true,"value":"s3"}}}}}`
	out, err := redactPlanJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "s3") {
		t.Errorf("a sensitive value is left: %s", out)
	}
	for _, keep := range []string{`"n"`, `"ok"`, `"x"`, `"y"`} {
		if !strings.Contains(string(out), keep) {
			t.Errorf("%s was redacted too: %s", keep, out)
		}
	}
	if !json.Valid(out) {
		t.Errorf("not JSON: %s", out)
	}
}

func TestPlanTextAndCounts(t *testing.T) {
	printed := `terraform_data.app: Refreshing state... [id=1]

Terraform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  ~ update in place

Terraform will perform the following actions:

  # terraform_data.app will be updated in-place

Plan: 1 to import, 2 to add, 1 to change, 3 to destroy.

─────────────────────────────────────────────────────────────────────────────

Saved the plan to: /tmp/job/outpost.tfplan

To perform exactly these actions, run the following command to apply:
    terraform apply "/tmp/job/outpost.tfplan"
`
	text := planText(printed)
	if strings.Contains(text, "Refreshing state") || strings.Contains(text, "Saved the plan") || strings.Contains(text, "───") ||
		!strings.HasPrefix(text, "Terraform used the selected providers") || !strings.HasSuffix(text, "to destroy.\n") {
		t.Errorf("plan text:\n%q", text)
	}
	if add, change, del := countsFromText(text); add != 2 || change != 1 || del != 3 {
		t.Errorf("counts %d/%d/%d, want 2/1/3", add, change, del)
	}
	if add, change, del := countsFromText("No changes. Your infrastructure matches the configuration.\n"); add+change+del != 0 {
		t.Errorf("no-op counts %d/%d/%d", add, change, del)
	}
}

// What "apply -auto-approve" printed (terraform v1.11.4, TF_IN_AUTOMATION):
// the plan is what comes before the first action.
func TestAppliedPlanText(t *testing.T) {
	for _, c := range []struct {
		name, printed, want string
		changes             bool
		add, change, del    int
	}{{
		name: "create, with a provisioner",
		printed: `
Terraform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  + create

Terraform will perform the following actions:

  # terraform_data.r will be created
  + resource "terraform_data" "r" {
      + input  = "a"
    }

Plan: 1 to add, 0 to change, 0 to destroy.

Changes to Outputs:
  + greeting = (known after apply)
terraform_data.r: Creating...
terraform_data.r: Provisioning with 'local-exec'...
terraform_data.r (local-exec): Executing: ["/bin/sh" "-c" "echo provisioned"]
terraform_data.r: Creation complete after 0s [id=7b16]

Apply complete! Resources: 1 added, 0 changed, 0 destroyed.

Outputs:

greeting = "hello a"
`,
		want: "Terraform used the selected providers", changes: true, add: 1,
	}, {
		name: "no changes",
		printed: `terraform_data.app: Refreshing state... [id=58d6]
data.http.x: Reading...
data.http.x: Read complete after 0s [id=x]

No changes. Your infrastructure matches the configuration.

Terraform has compared your real infrastructure against your configuration
and found no differences, so no changes are needed.

Apply complete! Resources: 0 added, 0 changed, 0 destroyed.

Outputs:

greeting = "hello b"
`,
		want: "No changes. Your infrastructure matches the configuration.",
	}, {
		name: "lines before the plan: a slow lock, a warning, an import, drift",
		printed: `Acquiring state lock. This may take a few moments...
terraform_data.r: Preparing import... [id=abc]
terraform_data.r: Refreshing state... [id=abc]
data.http.x: Reading...

Warning: Provider development overrides are in effect

Note: Objects have changed outside of Terraform

Terraform detected the following changes made outside of Terraform since the
last "terraform apply" which may have affected this plan:

  # terraform_data.r has changed

Terraform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  ~ update in-place

Terraform will perform the following actions:

  # terraform_data.r will be updated in-place

Plan: 0 to add, 1 to change, 0 to destroy.
ephemeral.random_password.p: Opening...
terraform_data.r: Modifying... [id=abc]
terraform_data.r: Modifications complete after 0s [id=abc]

Apply complete! Resources: 0 added, 1 changed, 0 destroyed.
`,
		want: "Note: Objects have changed outside of Terraform", changes: true, change: 1,
	}, {
		name: "destroy",
		printed: `terraform_data.app: Refreshing state... [id=58d6]

Terraform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  - destroy

Terraform will perform the following actions:

  # terraform_data.app will be destroyed

Plan: 0 to add, 0 to change, 1 to destroy.

Changes to Outputs:
  - greeting = "hello b" -> null
terraform_data.app: Destroying... [id=58d6]
terraform_data.app: Destruction complete after 0s

Apply complete! Resources: 0 added, 0 changed, 1 destroyed.
`,
		want: "Terraform used the selected providers", changes: true, del: 1,
	}} {
		t.Run(c.name, func(t *testing.T) {
			text := appliedPlanText(c.printed)
			if !strings.HasPrefix(text, c.want) || strings.Contains(text, "Refreshing state") || strings.Contains(text, "Reading...") ||
				strings.Contains(text, "Acquiring state lock") || strings.Contains(text, "Preparing import") || strings.Contains(text, "Opening") ||
				strings.Contains(text, "complete") || strings.Contains(text, "...") || strings.Contains(text, "Outputs:\n\n") ||
				strings.HasSuffix(text, "\n\n") {
				t.Errorf("plan text:\n%s", text)
			}
			if c.changes && c.change == 0 && !strings.Contains(text, "Changes to Outputs:\n") {
				t.Errorf("the plan's changes to outputs are cut off:\n%s", text)
			}
			if got := !noChanges.MatchString(text); got != c.changes {
				t.Errorf("changes %v, want %v", got, c.changes)
			}
			if add, change, del := countsFromText(text); add != c.add || change != c.change || del != c.del {
				t.Errorf("counts %d/%d/%d, want %d/%d/%d", add, change, del, c.add, c.change, c.del)
			}
		})
	}
}

// A manifest's module_sync is checked with the rest, each error naming the
// field.
func TestValidateModuleSync(t *testing.T) {
	ref := `{"registry":{"address":"vendor.example:5000"},"repository":"org/app/db","digest":"sha256:` + strings.Repeat("a", 64) + `"}`
	base := func(op, module string) string {
		return `{"operation":"` + op + `","workspace":"ins_1.component.db",` + module + `,
			"backend":{"address":"http://gw/s","lock_address":"http://gw/l","unlock_address":"http://gw/l","password":"p"}}`
	}
	sync := `"module_sync":{"source":` + ref + `,"destination":{"repository":"outpost/db"}}`
	for _, tc := range []struct{ name, manifest, want string }{
		{"plan_apply with a destination to come", base("plan_apply", sync), ""},
		{"a plan", base("plan", sync), "module_sync: only a plan_apply job syncs its module, not a plan"},
		{"with module_artifact", base("plan_apply", sync+`,"module_artifact":`+ref), "module_sync: give the module, module_artifact or module_sync"},
		{"a source without digest", base("plan_apply", `"module_sync":{"source":{"registry":{"address":"r"},"repository":"x"},"destination":{"repository":"outpost/db"}}`),
			"module_sync.source: needs registry.address, repository and a sha256 digest"},
		{"no destination repository", base("plan_apply", `"module_sync":{"source":`+ref+`,"destination":{}}`), "module_sync.destination.repository: required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := New().Validate(json.RawMessage(tc.manifest))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid manifest refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// A manifest's env may not set what the runner sets itself (the names of
// protocol.TerraformRunnerEnv, the list the control plane refuses at sync
// too), nor a TF_VAR_ variable; other names pass.
func TestValidateEnv(t *testing.T) {
	manifest := func(name string) json.RawMessage {
		return json.RawMessage(`{"operation":"plan","workspace":"ins_1.component.db","module":"eA==","env":{"` + name + `":"x"},
			"backend":{"address":"http://gw/s","lock_address":"http://gw/l","unlock_address":"http://gw/l","password":"p"}}`)
	}
	for _, listed := range protocol.TerraformRunnerEnvNames() {
		name := strings.Replace(listed, "*", "DB", 1)
		err := New().Validate(manifest(name))
		if want := "env." + name + ": the runner sets " + name + " itself: "; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want %q…", name, err, want)
		}
		if name != "TF_CLI_CONFIG_FILE" && !strings.HasPrefix(name, "TF_HTTP_") && name != "CHECKPOINT_DISABLE" &&
			!strings.HasPrefix(name, "OUTPOST_") && len(tfexec.ProhibitedEnv(map[string]string{name: ""})) == 0 {
			t.Errorf("%s: listed as terraform-exec's, which does not refuse it", name)
		}
	}
	if err := New().Validate(manifest("TF_VAR_region")); err == nil || !strings.Contains(err.Error(), "variables go in variables") {
		t.Errorf("TF_VAR_region: error %v", err)
	}
	for _, name := range []string{"AWS_REGION", "TF_PLUGIN_CACHE_DIR", "TF_HTTPX", "KUBECONFIG"} {
		if err := New().Validate(manifest(name)); err != nil {
			t.Errorf("%s refused: %v", name, err)
		}
	}
}

// Every variable the runner puts in a terraform job's environment itself
// is on the list the control plane refuses at sync, so the two cannot
// drift apart.
func TestRunnerSetEnvIsListed(t *testing.T) {
	o := Options{Binary: "/bin/terraform", CLIConfig: "/etc/tf.rc", KubeAssets: "/k", KubeAssetsWait: time.Minute}
	env := append(o.Env("/cache"), "OUTPOST_JOB_ID=job_1", envCheckpoint+"=1", envHTTPAddress+"=x", envHTTPPass+"=x")
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if protocol.TerraformRunnerEnv(name) == "" {
			t.Errorf("the runner sets %s, which a component's env_vars may set too", name)
		}
	}
}

// The variables' pipe gives the variables to the process that reads it, and
// does not wait for one that ended without reading it.
func TestVarsPipe(t *testing.T) {
	dir := t.TempDir()
	opened := make(chan struct{})
	pipe, err := newVarsPipe(dir, func() { close(opened) })
	if err != nil {
		t.Skip(err) // no named pipes here
	}
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(pipe.path)
		got <- b
	}()
	<-opened
	if err := pipe.give([]byte(`{"a":1}`), make(chan struct{})); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != `{"a":1}` {
		t.Errorf("the reader read %q", b)
	}

	other, err := newVarsPipe(t.TempDir(), func() {})
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	close(exited)
	if err := other.give([]byte(`{}`), exited); !errors.Is(err, errNotRead) {
		t.Errorf("give to a pipe nobody reads, its reader gone: %v, want errNotRead", err)
	}
}

// Env hands jobs the runner's terraform settings, and nothing it was not
// given: a local cluster's assets and how long it waits for them.
func TestOptionsEnv(t *testing.T) {
	o := Options{Binary: "/opt/tf", CLIConfig: "/etc/tf.rc", NoInitCache: true}
	want := []string{EnvTerraform + "=/opt/tf", "TF_CLI_CONFIG_FILE=/etc/tf.rc"}
	if got := o.Env("/cache"); !slices.Equal(got, want) {
		t.Errorf("env %q, want %q", got, want)
	}
	o = Options{KubeAssets: "/kube", KubeAssetsWait: 25 * time.Minute}
	want = []string{EnvInitCache + "=/cache", "OUTPOST_KUBE_ASSETS=/kube", "OUTPOST_KUBE_ASSETS_WAIT=25m0s"}
	if got := o.Env("/cache"); !slices.Equal(got, want) {
		t.Errorf("env %q, want %q", got, want)
	}
}
