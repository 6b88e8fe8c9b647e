package activities

import (
	"testing"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// A config deploy runs the changed steps (a new build or a new rendering),
// looks again at those after them, leaves the rest unchanged, and tears the
// components the version removed down last: after every deploy step, and
// each after the removed components that depended on it.
func TestPlanConfigDeploy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changed []string
		removed []removedComponent
		steps   []string
	}{
		{"nothing changed, nothing removed", nil, nil, []string{
			"sandbox < unchanged", "network < sandbox unchanged", "cache < network sandbox unchanged",
			"db < network sandbox unchanged", "api < db cache sandbox unchanged", "web < api sandbox unchanged",
		}},
		{"one component's build: its dependents are looked at again", []string{"cache"}, nil, []string{
			"sandbox < unchanged", "network < sandbox unchanged", "cache < network sandbox",
			"db < network sandbox unchanged", "api < db cache sandbox if-changed", "web < api sandbox if-changed",
		}},
		{"a removed leaf: torn down after every deploy step", nil,
			[]removedComponent{{Name: "queue", Type: contract.TypeHelmChart, Deps: []string{"api", "network"}}}, []string{
				"sandbox < unchanged", "network < sandbox unchanged", "cache < network sandbox unchanged",
				"db < network sandbox unchanged", "api < db cache sandbox unchanged", "web < api sandbox unchanged",
				"queue < sandbox network cache db api web destroy",
			}},
		{"removed components that depend on each other: dependents first", []string{"sandbox"}, []removedComponent{
			{Name: "store", Type: contract.TypeTerraformModule, Deps: []string{"network"}},
			{Name: "worker", Type: contract.TypeContainerImage, Deps: []string{"store", "api"}},
		}, []string{
			"sandbox <", "network < sandbox if-changed", "cache < network sandbox if-changed",
			"db < network sandbox if-changed", "api < db cache sandbox if-changed", "web < api sandbox if-changed",
			"store < sandbox network cache db api web worker destroy",
			"worker < sandbox network cache db api web destroy",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := store.InstallOperation{Kind: store.OpDeployConfig, ApprovalMode: status.ApproveAll}
			steps, err := planSteps(op, testGraph(t))
			if err != nil {
				t.Fatal(err)
			}
			markChanged(steps, nameSet(tc.changed))
			down, err := teardownSteps(tc.removed, steps)
			if err != nil {
				t.Fatal(err)
			}
			checkSteps(t, append(steps, down...), tc.steps)
		})
	}
}

// A deprovision destroys first the components the install runs beyond its
// config version (a failed config deploy's), then the rest as always.
func TestPlanDeprovisionBeyondVersion(t *testing.T) {
	steps, err := planSteps(store.InstallOperation{Kind: store.OpDeprovision, ApprovalMode: status.ApproveAll}, testGraph(t))
	if err != nil {
		t.Fatal(err)
	}
	first, err := teardownSteps([]removedComponent{{Name: "queue", Type: contract.TypeTerraformModule, Deps: []string{"api"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSteps(t, destroyFirst(first, steps), []string{
		"queue < destroy",
		"network < cache db queue destroy prestart prestart-before-sandbox",
		"cache < api queue destroy",
		"db < api queue destroy prestart",
		"api < web queue destroy",
		"web < queue destroy",
		"sandbox < network cache db api web queue destroy",
	})
}
