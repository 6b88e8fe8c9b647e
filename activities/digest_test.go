package activities

import (
	"encoding/json"
	"testing"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/jobmanifest"
)

// The digests a step's render is compared by are those recorded before
// they were computed from structs (from maps, whose JSON has its keys in
// order): an install's next update_inputs does not see every step changed.
func TestRenderDigestsAreThoseRecordedBefore(t *testing.T) {
	r := &appconfig.Rendered{Variables: map[string]json.RawMessage{"cidr": json.RawMessage(`"10.0.0.0/16"`)},
		EnvVars: map[string]string{"TF_VAR_region": "eu", "AWS_PROFILE": "x"}}
	vars, env := jobmanifest.Variables(r.Variables, r.EnvVars)
	for _, source := range []string{"", "sha256:abc"} {
		before := map[string]any{"variables": vars, "env": env}
		if source != "" {
			before["source"] = source
		}
		if got, want := terraformDigest(r, source), digestOf(before); got != want {
			t.Errorf("terraform digest with source %q: %s, recorded before %s", source, got, want)
		}
	}
	values := &appconfig.RenderedValues{Values: json.RawMessage(`{"a": 1}`), Sensitive: []string{"values.a"}}
	before := map[string]any{"values": values.Values, "sensitive": values.Sensitive, "files": []string{"v.yaml"}, "kubeconfig": "kc"}
	if got, want := helmDigest(values, []string{"v.yaml"}, "kc"), digestOf(before); got != want {
		t.Errorf("helm digest %s, recorded before %s", got, want)
	}
}
