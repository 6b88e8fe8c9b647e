package jobmanifest

import (
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
)

// describe is the steps as "name<after,after" in order, hooks marked
// "[when]" or "[continue]".
func describe(steps []contract.StepSpec) string {
	var out []string
	for _, st := range steps {
		s := st.Name
		if len(st.After) > 0 {
			s += "<" + strings.Join(st.After, ",")
		}
		if h := st.Hook; h != nil && h.When != "" {
			s += "[" + h.When + "]"
		} else if h != nil && h.ContinueOnFailure {
			s += "[continue]"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestWithHooks(t *testing.T) {
	actions := []*appconfig.Action{
		{Name: "migrate", Triggers: []appconfig.Trigger{{Type: "before", Operation: "provision"},
			{Type: "before", Operation: "deploy_component", Component: "api", ContinueOnFailure: true}}},
		{Name: "warm", Triggers: []appconfig.Trigger{{Type: "after", Operation: "provision", When: "always"},
			{Type: "after", Operation: "deploy_component", Component: "api"}}},
		{Name: "drain", Triggers: []appconfig.Trigger{{Type: "before", Operation: "teardown_component", Component: "api"}}},
		{Name: "nightly", Triggers: []appconfig.Trigger{{Type: "cron", Schedule: "0 3 * * *"}, {Type: "manual"}}},
	}
	provision := func() []contract.StepSpec {
		return []contract.StepSpec{{Name: "sandbox"}, {Name: "db", After: []string{"sandbox"}}, {Name: "api", After: []string{"db", "sandbox"}}}
	}
	for _, tc := range []struct {
		name     string
		kind     string
		planOnly bool
		steps    []contract.StepSpec
		want     string
	}{
		{"provision", "provision", false, provision(),
			"before:migrate sandbox<before:migrate db<sandbox,before:migrate before:migrate:api<db,sandbox,before:migrate[continue] " +
				"api<db,sandbox,before:migrate:api,before:migrate after:warm:api<api[success] " +
				"after:warm<before:migrate,sandbox,db,before:migrate:api,api,after:warm:api[always]"},
		{"plan-only runs no hooks", "provision", true, provision(), "sandbox db<sandbox api<db,sandbox"},
		{"an unchanged component's hooks do not run", "deploy_config", false,
			[]contract.StepSpec{{Name: "sandbox"}, {Name: "api", After: []string{"sandbox"}, Unchanged: true}}, "sandbox api<sandbox"},
		{"teardown", "teardown_component", false, []contract.StepSpec{{Name: "api", Destroy: true}},
			"before:drain:api api<before:drain:api"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describe(WithHooks(tc.kind, tc.planOnly, tc.steps, actions)); got != tc.want {
				t.Errorf("steps\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
