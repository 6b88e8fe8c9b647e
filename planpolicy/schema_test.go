package planpolicy_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/outpost-dev/outpost/planpolicy"
	"github.com/outpost-dev/outpost/protocol"
)

// TestInputConformsToSchema: what the runner gives policies — a real
// terraform plan of the demo, a chart's objects, a build — is what
// schemas/plan-policy-input.schema.json describes, and the schema refuses
// a field the input does not have.
func TestInputConformsToSchema(t *testing.T) {
	schema := testutil.CompileSchema(t, "../schemas/plan-policy-input.schema.json", "")
	var plan any
	if err := json.Unmarshal(demoPlans(t, "network")["network"], &plan); err != nil {
		t.Fatal(err)
	}
	install := protocol.PolicyInstall{ID: "ins_1", Name: "acme", Labels: map[string]string{"env": "prod"}, Registry: "127.0.0.1:5000"}
	for name, in := range map[string]planpolicy.Input{
		"terraform": {Kind: planpolicy.KindTerraform, Install: install, Step: "network", Terraform: plan},
		"helm": {Kind: planpolicy.KindHelm, Install: install, Step: "web", Manifests: []any{
			map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web"}}}},
		"docker_build": {Kind: planpolicy.KindDockerBuild, Install: install, DockerBuild: &planpolicy.DockerBuild{
			Dockerfile: "FROM scratch\n", BuildArgs: map[string]string{"VERSION": "1"}}},
	} {
		if err := schema.Validate(asJSON(t, in)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := asJSON(t, planpolicy.Input{Kind: planpolicy.KindTerraform, Install: install}).(map[string]any)
	bad["plan"] = "x"
	if err := schema.Validate(bad); err == nil || !strings.Contains(err.Error(), "plan") {
		t.Errorf("an unknown field: %v, want it refused", err)
	}
}

func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
