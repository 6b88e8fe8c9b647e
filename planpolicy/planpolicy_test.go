package planpolicy_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/planpolicy"
	"github.com/outpost-dev/outpost/protocol"
)

func TestParseNamesFileAndLine(t *testing.T) {
	err := planpolicy.Parse([]protocol.PolicyModule{
		{File: "policies/ok.rego", Source: "package ok\n\ndeny contains \"x\" if false\n"},
		{File: "policies/bad.rego", Source: "package bad\n\ndeny contains msg if {\n\tmsg := \n}\n"},
	})
	var ps planpolicy.Problems
	if !errors.As(err, &ps) || len(ps) == 0 {
		t.Fatalf("Parse: %v, want Problems", err)
	}
	if ps[0].File != "policies/bad.rego" || ps[0].Line != 4 && ps[0].Line != 5 {
		t.Fatalf("problem %+v: want policies/bad.rego at line 4 or 5", ps[0])
	}
}

func TestParseRejectsRegoV0AndNetworkBuiltins(t *testing.T) {
	for name, src := range map[string]string{
		"v0.rego":   "package v0\n\ndeny[msg] { msg := \"x\" }\n",
		"http.rego": "package h\n\ndeny contains msg if {\n\tr := http.send({\"method\": \"GET\", \"url\": \"http://127.0.0.1:1\"})\n\tmsg := r.body\n}\n",
		"env.rego":  "package e\n\nwarn contains msg if {\n\tmsg := opa.runtime().env.HOME\n}\n",
	} {
		err := planpolicy.Parse([]protocol.PolicyModule{{File: name, Source: src}})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: Parse = %v, want an error naming the file", name, err)
		}
	}
}

const denyDestroy = `package customer.no_destroy

deny contains sprintf("%s would be destroyed", [rc.address]) if {
	some rc in input.terraform.resource_changes
	"delete" in rc.change.actions
}
`

const warnBig = `package vendor.size

warn contains "more than one change" if count(input.terraform.resource_changes) > 1
`

func destroyPlan() planpolicy.Input {
	return planpolicy.Input{Kind: planpolicy.KindTerraform, Install: protocol.PolicyInstall{ID: "ins_1"},
		Terraform: map[string]any{"resource_changes": []any{
			map[string]any{"address": "terraform_data.a", "change": map[string]any{"actions": []any{"delete"}}},
			map[string]any{"address": "terraform_data.b", "change": map[string]any{"actions": []any{"create"}}},
		}}}
}

func TestCheckerVendorWarnsCustomerDenies(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "no_destroy.rego"), []byte(denyDestroy), 0o600); err != nil {
		t.Fatal(err)
	}
	// A vendor module in the customer's package cannot add to, or silence, its rule.
	vendor := []protocol.PolicyModule{{File: "policies/size.rego", Source: warnBig},
		{File: "policies/shadow.rego", Source: "package customer.no_destroy\n\nwarn contains \"vendor was here\" if true\n"}}
	c, err := planpolicy.NewChecker(context.Background(), vendor, dir)
	if err != nil {
		t.Fatal(err)
	}
	res := c.Check(context.Background(), destroyPlan())
	var got []string
	for _, r := range res {
		got = append(got, r.Source+" "+r.Policy+" deny="+strings.Join(r.Deny, ",")+" warn="+strings.Join(r.Warn, ","))
	}
	want := []string{
		"vendor customer.no_destroy deny= warn=vendor was here",
		"vendor vendor.size deny= warn=more than one change",
		"customer customer.no_destroy deny=terraform_data.a would be destroyed warn=",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	err = planpolicy.Denied(res)
	if err == nil || !strings.Contains(err.Error(), "customer policy customer.no_destroy denies: terraform_data.a would be destroyed") {
		t.Fatalf("Denied = %v", err)
	}
	if got := planpolicy.DeniedBy("plan: " + err.Error()); !slices.Equal(got, []string{"customer policy customer.no_destroy"}) {
		t.Fatalf("DeniedBy = %q", got)
	}
	if got := planpolicy.DeniedBy("terraform apply: exit status 1"); got != nil {
		t.Fatalf("DeniedBy of another error = %q", got)
	}
}

func TestCheckerPolicyErrorDoesNotPass(t *testing.T) {
	src := "package p\n\ndeny contains x if {\n\tx := to_number(input.kind)\n}\n"
	c, err := planpolicy.NewChecker(context.Background(), []protocol.PolicyModule{{File: "p.rego", Source: src}}, "")
	if err != nil {
		t.Fatal(err)
	}
	res := c.Check(context.Background(), planpolicy.Input{Kind: planpolicy.KindTerraform})
	if len(res) != 1 || res[0].Passed() {
		t.Fatalf("results %+v: want one that did not pass", res)
	}
	if planpolicy.Denied(res) == nil {
		t.Fatal("Denied = nil for a policy that could not say")
	}
}

func TestCheckerCustomerDirErrorsNameTheDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.rego"), []byte("package x\ndeny contains"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := planpolicy.NewChecker(context.Background(), nil, dir)
	if err == nil || !strings.Contains(err.Error(), "customer") || !strings.Contains(err.Error(), "broken.rego:") {
		t.Fatalf("NewChecker = %v, want the customer's file named", err)
	}
}
