package activities

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// testGraph: network ← {cache, db} ← api ← web. cache's environment reads
// another component's outputs, db's the sandbox's.
func testGraph(t *testing.T) installGraph {
	t.Helper()
	g := installGraph{Version: 3, Deps: appconfig.Graph{
		"network": nil, "cache": {"network"}, "db": {"network"}, "api": {"db", "cache"}, "web": {"api"}}}
	nodes := map[string]graphNode{
		"network": {Type: contract.TypeTerraformModule},
		"cache":   {Type: contract.TypeTerraformModule, EnvReadsComponents: true},
		"db":      {Type: contract.TypeTerraformModule, EnvReadsSandbox: true},
		"api":     {Type: contract.TypeHelmChart},
		"web":     {Type: contract.TypeContainerImage},
	}
	order, err := g.Deps.Order()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range order {
		n := nodes[name]
		n.Name = name
		g.Components = append(g.Components, n)
	}
	return g
}

func TestPlanSteps(t *testing.T) {
	op := func(kind, component string, withDependents bool) store.InstallOperation {
		return store.InstallOperation{Kind: kind, Component: component, WithDependents: withDependents, ApprovalMode: status.ApproveAll}
	}
	prompt := op(store.OpProvision, "", false)
	prompt.ApprovalMode = status.Prompt
	planOnly := op(store.OpReprovision, "", false)
	planOnly.PlanOnly = true
	for _, tc := range []struct {
		name  string
		op    store.InstallOperation
		steps []string // "step < what it waits for [flags]"
	}{
		{"provision", op(store.OpProvision, "", false), []string{
			"sandbox <",
			"network < sandbox prestart prestart-before-sandbox",
			"cache < network sandbox",
			"db < network sandbox prestart",
			"api < db cache sandbox",
			"web < api sandbox",
		}},
		{"provision with prompts: nothing starts early", prompt, []string{
			"sandbox <", "network < sandbox", "cache < network sandbox", "db < network sandbox",
			"api < db cache sandbox", "web < api sandbox",
		}},
		{"reprovision, plan only: nothing starts early", planOnly, []string{
			"sandbox <", "network < sandbox", "cache < network sandbox", "db < network sandbox",
			"api < db cache sandbox", "web < api sandbox",
		}},
		{"deprovision: dependents first, the sandbox last", op(store.OpDeprovision, "", false), []string{
			"network < cache db destroy prestart prestart-before-sandbox",
			"cache < api destroy",
			"db < api destroy prestart",
			"api < web destroy",
			"web < destroy",
			"sandbox < network cache db api web destroy",
		}},
		{"deploy one component", op(store.OpDeployComponent, "db", false), []string{
			"db < prestart",
		}},
		{"deploy with dependents", op(store.OpDeployComponent, "db", true), []string{
			"db < prestart", "api < db", "web < api",
		}},
		{"update inputs: the sandbox and every component, nothing starts early", op(store.OpUpdateInputs, "", false), []string{
			"sandbox <", "network < sandbox", "cache < network sandbox", "db < network sandbox",
			"api < db cache sandbox", "web < api sandbox",
		}},
		{"reconcile drift: the sandbox and every component, nothing starts early", op(store.OpReconcileDrift, "", false), []string{
			"sandbox <", "network < sandbox", "cache < network sandbox", "db < network sandbox",
			"api < db cache sandbox", "web < api sandbox",
		}},
		{"teardown one component", op(store.OpTeardownComponent, "web", false), []string{
			"web < destroy",
		}},
		{"teardown with dependents", op(store.OpTeardownComponent, "db", true), []string{
			"db < api destroy prestart", "api < web destroy", "web < destroy",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := planSteps(tc.op, testGraph(t))
			if err != nil {
				t.Fatal(err)
			}
			checkSteps(t, steps, tc.steps)
		})
	}
}

func TestPlanStepsUnknownComponent(t *testing.T) {
	_, err := planSteps(store.InstallOperation{Kind: store.OpDeployComponent, Component: "queue"}, testGraph(t))
	if want := `the app config (version 3) has no component "queue"`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// checkSteps compares the steps, as describeStep shows them, with want.
func checkSteps(t *testing.T, steps []contract.StepSpec, want []string) {
	t.Helper()
	got := make([]string, len(steps))
	for i, st := range steps {
		got[i] = describeStep(st)
	}
	if !slices.Equal(got, want) {
		t.Errorf("steps:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func nameSet(names []string) map[string]bool {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return set
}

func describeStep(st contract.StepSpec) string {
	s := strings.TrimSpace(fmt.Sprintf("%s < %s", st.Name, strings.Join(st.After, " ")))
	for _, f := range []struct {
		on   bool
		name string
	}{{st.Destroy, "destroy"}, {st.Prestart, "prestart"}, {st.PrestartBeforeSandbox, "prestart-before-sandbox"},
		{st.Unchanged, "unchanged"}, {st.IfChanged, "if-changed"}} {
		if f.on {
			s += " " + f.name
		}
	}
	return s
}

// An input update runs the steps whose rendering changed (a reconcile, those
// its check found drifted, whatever their kind: a chart, an image as well as
// a module), looks again at those after them once they end, and leaves
// every other one unchanged.
func TestMarkChanged(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    string // "": update_inputs
		changed []string
		steps   []string
	}{
		{"nothing changed", "", nil, []string{
			"sandbox < unchanged", "network < sandbox unchanged", "cache < network sandbox unchanged",
			"db < network sandbox unchanged", "api < db cache sandbox unchanged", "web < api sandbox unchanged",
		}},
		{"one component in the middle: its dependents, transitively, are looked at again", "", []string{"db"}, []string{
			"sandbox < unchanged", "network < sandbox unchanged", "cache < network sandbox unchanged",
			"db < network sandbox", "api < db cache sandbox if-changed", "web < api sandbox if-changed",
		}},
		{"a leaf", "", []string{"web"}, []string{
			"sandbox < unchanged", "network < sandbox unchanged", "cache < network sandbox unchanged",
			"db < network sandbox unchanged", "api < db cache sandbox unchanged", "web < api sandbox",
		}},
		{"the sandbox: every component comes after it", "", []string{"sandbox", "cache"}, []string{
			"sandbox <", "network < sandbox if-changed", "cache < network sandbox",
			"db < network sandbox if-changed", "api < db cache sandbox if-changed", "web < api sandbox if-changed",
		}},
		{"a reconcile of a drifted module", store.OpReconcileDrift, []string{"cache"}, []string{
			"sandbox < unchanged", "network < sandbox unchanged", "cache < network sandbox",
			"db < network sandbox unchanged", "api < db cache sandbox if-changed", "web < api sandbox if-changed",
		}},
		{"a reconcile of a drifted chart and image", store.OpReconcileDrift, []string{"api", "web"}, []string{
			"sandbox < unchanged", "network < sandbox unchanged", "cache < network sandbox unchanged",
			"db < network sandbox unchanged", "api < db cache sandbox", "web < api sandbox",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind := cmp.Or(tc.kind, store.OpUpdateInputs)
			steps, err := planSteps(store.InstallOperation{Kind: kind, ApprovalMode: status.ApproveAll}, testGraph(t))
			if err != nil {
				t.Fatal(err)
			}
			markChanged(steps, nameSet(tc.changed))
			checkSteps(t, steps, tc.steps)
		})
	}
}

// A drift check plans the sandbox and every terraform, helm_chart and
// container_image component at once: none waits for another, none starts
// before its inputs.
func TestDriftCheckStepsAllStartAtOnce(t *testing.T) {
	steps, err := planSteps(store.InstallOperation{Kind: store.OpDriftCheck, PlanOnly: true, ApprovalMode: status.ApproveAll}, testGraph(t))
	if err != nil {
		t.Fatal(err)
	}
	checkSteps(t, driftSteps(steps), []string{"sandbox <", "network <", "cache <", "db <", "api <", "web <"})
}
