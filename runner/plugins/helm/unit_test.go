package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

const token = "kube-Token-never-shown"

// kubeconfig reaches server with a bearer token.
func kubeconfig(server string) string {
	return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ` + server + `
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: ` + token + `
contexts:
- name: ctx
  context:
    cluster: c
    user: u
current-context: ctx
`
}

func manifest(mod func(m *protocol.HelmManifest)) json.RawMessage {
	m := protocol.HelmManifest{Operation: protocol.HelmDeploy, Kubeconfig: kubeconfig("https://127.0.0.1:1"),
		Release: "shop", Namespace: "shop", ChartArchive: []byte("chart")}
	mod(&m)
	b, _ := json.Marshal(m)
	return b
}

func TestValidateNamesTheField(t *testing.T) {
	ref := &protocol.ArtifactRef{Registry: protocol.RegistryAccess{Address: "127.0.0.1:5000"}, Repository: "charts/shop",
		Digest: "sha256:" + strings.Repeat("a", 64)}
	for _, tc := range []struct {
		mod  func(m *protocol.HelmManifest)
		want string
	}{
		{func(m *protocol.HelmManifest) { m.Operation = "" }, "operation: required"},
		{func(m *protocol.HelmManifest) { m.Operation = "apply" }, `operation: must be plan, deploy or uninstall, got "apply"`},
		{func(m *protocol.HelmManifest) { m.Kubeconfig = "" }, "kubeconfig: required"},
		{func(m *protocol.HelmManifest) { m.Kubeconfig = "token: [" + token }, "kubeconfig: not a valid kubeconfig"},
		{func(m *protocol.HelmManifest) {
			m.Kubeconfig = strings.Replace(kubeconfig("https://x"), "current-context: ctx", "current-context: other", 1)
		}, `kubeconfig: current-context "other" is not among its contexts`},
		{func(m *protocol.HelmManifest) { m.Release = "" }, "release: required"},
		{func(m *protocol.HelmManifest) { m.Release = "Shop_1" }, `release: "Shop_1": invalid release name`},
		{func(m *protocol.HelmManifest) { m.Namespace = "" }, "namespace: required"},
		{func(m *protocol.HelmManifest) { m.Namespace = "Shop" }, `namespace: "Shop": a lowercase RFC 1123 label`},
		{func(m *protocol.HelmManifest) { m.TimeoutMS = -1 }, "timeout_ms: must not be negative"},
		{func(m *protocol.HelmManifest) { m.ChartArchive = nil }, "chart: required for a deploy"},
		{func(m *protocol.HelmManifest) { m.Chart = ref }, "chart: give either chart"},
		{func(m *protocol.HelmManifest) { c := *ref; c.Digest = "latest"; m.Chart, m.ChartArchive = &c, nil }, `chart.digest: must be sha256:<64 hex digits>, got "latest"`},
		{func(m *protocol.HelmManifest) { c := *ref; c.Repository = ""; m.Chart, m.ChartArchive = &c, nil }, "chart.repository: required"},
		{func(m *protocol.HelmManifest) { c := *ref; c.Registry.Address = ""; m.Chart, m.ChartArchive = &c, nil }, "chart.registry.address: required"},
		{func(m *protocol.HelmManifest) {
			c := *ref
			c.Registry.Password = "p"
			m.Chart, m.ChartArchive = &c, nil
		}, "chart.registry: username and password go together"},
		{func(m *protocol.HelmManifest) { m.Values = json.RawMessage(`[1]`) }, "values: must be a JSON object"},
		{func(m *protocol.HelmManifest) { m.ValuesFiles = []string{"a: 1", "a: [b"} }, "values_files[1]: "},
	} {
		err := New().Validate(manifest(tc.mod))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate: %v; want %q", err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), token) {
			t.Errorf("Validate's error shows the kubeconfig's token: %v", err)
		}
	}
	// An uninstall needs no chart.
	if err := New().Validate(manifest(func(m *protocol.HelmManifest) { m.Operation, m.ChartArchive = protocol.HelmUninstall, nil })); err != nil {
		t.Errorf("uninstall without a chart: %v", err)
	}
}

// TestUnreachableClusterKeepsTheTokenSecret: the error names the cluster,
// never the credential.
func TestUnreachableClusterKeepsTheTokenSecret(t *testing.T) {
	addr := testutil.FreeAddr(t) // nothing listens there now
	p := New()
	if err := p.Validate(manifest(func(m *protocol.HelmManifest) {
		m.Operation, m.ChartArchive = protocol.HelmUninstall, nil
		m.Kubeconfig = kubeconfig("https://" + addr)
	})); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	_, err := p.Execute(context.Background(), plugins.Run{Dir: t.TempDir(), Stdout: &logs, Stderr: &logs})
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("uninstall on a cluster that is not there: %v", err)
	}
	if strings.Contains(logs.String()+err.Error(), token) {
		t.Errorf("the token shows: %v\n%s", err, logs.String())
	}
}

func TestRedactReplacesEverySecret(t *testing.T) {
	p := &plugin{secrets: plugins.NewSecrets(token, "registry-pass")}
	got := p.redact("Authorization: Bearer " + token + " for registry-pass@host")
	if got != "Authorization: Bearer "+Redacted+" for "+Redacted+"@host" {
		t.Errorf("redact: %q", got)
	}
}

func TestValuesMergeInOrder(t *testing.T) {
	v, err := values([]string{"a: 1\nnested:\n  first: 1\n  second: 1\nlist: [1, 2]\n", "nested:\n  second: 2\nlist: [3]\n"},
		json.RawMessage(`{"a": "from values", "nested": {"third": 3}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(v)
	if want := `{"a":"from values","list":[3],"nested":{"first":1,"second":2,"third":3}}`; string(got) != want {
		t.Errorf("values: %s; want %s", got, want)
	}
}

func TestDiffRedactsSecretData(t *testing.T) {
	secret := func(data map[string]any) object {
		return object{content: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}, "data": data}}
	}
	parse := func(o object) object {
		o.APIVersion, o.Kind, o.Name, o.Namespace = "v1", "Secret", "s", "ns"
		return o
	}
	before := parse(secret(map[string]any{"same": "c2FtZQ==", "gone": "Z29uZQ==", "changes": "b2xk"}))
	after := parse(secret(map[string]any{"same": "c2FtZQ==", "changes": "bmV3", "added": "YWRkZWQ="}))
	d, err := diffObjects([]object{before}, []object{after})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-  changes: " + Redacted, "+  changes: " + RedactedChanged, "+  added: " + RedactedChanged,
		"-  gone: " + Redacted, "   same: " + Redacted} {
		if !strings.Contains(d.text, want+"\n") {
			t.Errorf("diff lacks %q:\n%s", want, d.text)
		}
	}
	for _, v := range []string{"c2FtZQ==", "Z29uZQ==", "b2xk", "bmV3", "YWRkZWQ="} {
		if strings.Contains(d.text, v) {
			t.Errorf("diff shows %s:\n%s", v, d.text)
		}
	}
	if len(d.changed) != 1 || before.content["data"].(map[string]any)["same"] != "c2FtZQ==" {
		t.Errorf("changed %v; the objects themselves must stay as they were", d.changed)
	}
	// An unchanged Secret is no change.
	if d, _ := diffObjects([]object{before}, []object{before}); d.hasChanges() || d.text != "" {
		t.Errorf("unchanged Secret: %+v", d)
	}
}

func TestFitPlanCutsTheDiff(t *testing.T) {
	out := fitPlan(protocol.HelmPlanOutputs{HasChanges: true, Diff: strings.Repeat("+ é line\n", protocol.MaxOutputsBytes/5)})
	b, _ := json.Marshal(out)
	if !out.Truncated || len(b) > protocol.MaxOutputsBytes || !strings.HasSuffix(out.Diff, "the logs have it whole)\n") {
		t.Errorf("fitPlan: truncated %v, %d bytes", out.Truncated, len(b))
	}
}

func TestSensitiveValuesAreFoundByKey(t *testing.T) {
	vals := json.RawMessage(`{"db": {"password": "hunter2-db", "port": 54321}, "hosts": ["public", {"name": "secret-host"}], "plain": "shown"}`)
	got, err := sensitiveStrings(vals, []string{"values.db", "values.hosts[1].name"})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"54321", "hunter2-db", "secret-host"}; !slices.Equal(got, want) {
		t.Errorf("sensitive strings %q; want %q", got, want)
	}
	for _, key := range []string{"values.missing", "values.hosts[2]", "values.plain.x", "values.hosts[x]"} {
		if _, err := sensitiveStrings(vals, []string{key}); err == nil || !strings.Contains(err.Error(), "sensitive_values[0]: \""+key+"\" names no value") {
			t.Errorf("key %s: %v", key, err)
		}
	}
}
