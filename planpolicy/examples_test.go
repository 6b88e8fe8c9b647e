package planpolicy_test

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/outpost-dev/outpost/planpolicy"
)

const examplesDir = "../examples/policies"

// TestExamplePoliciesPassTheirRegoTests runs the Rego tests beside the
// example policies (what `opa test examples/policies` runs).
func TestExamplePoliciesPassTheirRegoTests(t *testing.T) {
	results, err := tester.Run(context.Background(), examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	byPackage := map[string]int{}
	for _, r := range results {
		if !r.Pass() {
			t.Errorf("%s.%s: %s", r.Package, r.Name, r.String())
		}
		byPackage[r.Package]++
	}
	for _, p := range []string{"data.outpost.no_public_bucket_test", "data.outpost.no_privileged_pod_test",
		"data.outpost.images_from_install_registry_test", "data.outpost.no_destroy_in_prod_test"} {
		if byPackage[p] < 3 {
			t.Errorf("%s: %d tests ran, want at least 3 (ran: %v)", p, byPackage[p], byPackage)
		}
	}
}

// TestExamplePoliciesCompileAsPlanPolicies: what a runner or a sync does
// with them.
func TestExamplePoliciesCompileAsPlanPolicies(t *testing.T) {
	mods, err := planpolicy.ReadDir(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := planpolicy.Compile(context.Background(), "customer", mods)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 4 {
		t.Fatalf("%d policies, want 4", s.Len())
	}
}
