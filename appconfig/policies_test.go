package appconfig

import (
	"testing"
	"testing/fstest"
)

const denyPublic = `package vendor.public

deny contains rc.address if {
	some rc in input.terraform.resource_changes
	rc.change.after.public == true
}
`

func TestPoliciesAreReadWithoutTheirTests(t *testing.T) {
	files := base()
	files["policies/public.rego"] = file(denyPublic)
	files["policies/public_test.rego"] = file("package vendor.public_test\n\ntest_nothing if true\n")
	files["policies/README.md"] = file("not a policy")
	c := load(t, files)
	got := c.Policies()
	if len(got) != 1 || got[0].File != "policies/public.rego" || got[0].Source != denyPublic {
		t.Fatalf("policies %+v: want policies/public.rego alone", got)
	}
	if c := load(t, base()); len(c.Policies()) != 0 {
		t.Fatalf("a config without policies/ has %d", len(c.Policies()))
	}
}

func TestPolicyProblemsNameFileAndLine(t *testing.T) {
	checkProblems(t, base, []problemCase{
		{name: "syntax", change: func(f fstest.MapFS) {
			f["policies/bad.rego"] = file("package bad\n\ndeny contains msg if {\n\tmsg := \n}\n")
		}, file: "policies/bad.rego", key: "line 5", wantContains: "unexpected"},
		{name: "rego v0", change: func(f fstest.MapFS) {
			f["policies/old.rego"] = file("package old\n\ndeny[msg] {\n\tmsg := \"x\"\n}\n")
		}, file: "policies/old.rego", key: "line 3", wantContains: "if"},
		{name: "network", change: func(f fstest.MapFS) {
			f["policies/net.rego"] = file("package net\n\nwarn contains x if {\n\tx := http.send({\"method\": \"GET\", \"url\": \"http://127.0.0.1:1\"}).body\n}\n")
		}, file: "policies/net.rego", key: "line 4", wantContains: "http.send"},
	})
}
