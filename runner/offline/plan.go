package offline

import (
	"slices"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
)

// syncStep loads the bundle's builds into the install's registry.
const syncStep = "sync"

// plan is the deploy's steps in the order they run, with the lifecycle
// hooks the connected provision has (jobmanifest.WithHooks): the
// provision's before-hooks, the sandbox, the sync, each component in
// dependency order between its deploy's before- and after-hooks, then the
// provision's after-hooks.
func (d *deployment) plan() ([]contract.StepSpec, error) {
	g := d.cfg.Graph()
	order, err := g.Order()
	if err != nil {
		return nil, err
	}
	specs := []contract.StepSpec{{Name: status.SandboxStep}, {Name: syncStep, After: []string{status.SandboxStep}}}
	for _, name := range order {
		specs = append(specs, contract.StepSpec{Name: name, After: append(slices.Clone(g[name]), syncStep)})
	}
	return jobmanifest.WithHooks(contract.OpProvision, false, specs, d.cfg.Actions), nil
}

// outcomes are how the steps that ended did ("succeeded", "failed",
// "skipped"), by name, to decide whether the next runs, as the connected
// operation's scheduler decides (workflows: readyToStart, afterHookGate).
type outcomes struct {
	specs  map[string]contract.StepSpec
	status map[string]string
}

// ok: the steps after step name may go on; a hook with
// continue_on_failure that failed stops nothing.
func (o outcomes) ok(name string) bool {
	h := o.specs[name].Hook
	return o.status[name] == "succeeded" || o.status[name] == "failed" && h != nil && h.ContinueOnFailure
}

// skip says why st does not run ("": it runs): a step or a before-hook
// when a step it follows did not succeed; an after-hook by afterHookSkip.
func (o outcomes) skip(st contract.StepSpec) string {
	if st.Hook != nil && st.Hook.Trigger == appconfig.TriggerAfter {
		return o.afterHookSkip(st)
	}
	for _, d := range st.After {
		if !o.ok(d) {
			return "skipped: " + d + " did not succeed"
		}
	}
	return ""
}

// afterHookSkip: a component's after-hook does not run when the component
// did not; then its When decides: success runs only if every step it
// follows succeeded, failure only if one did not, always (a hook among them
// that did not run counts for neither).
func (o outcomes) afterHookSkip(st contract.StepSpec) string {
	if c := st.Hook.Component; c != "" && o.status[c] != "succeeded" && o.status[c] != "failed" {
		return "skipped: " + c + " did not run"
	}
	notOK := ""
	for _, d := range st.After {
		if o.specs[d].Hook != nil && o.status[d] == "skipped" {
			continue
		}
		if !o.ok(d) {
			notOK = d
			break
		}
	}
	switch when := st.Hook.When; {
	case when == appconfig.WhenFailure && notOK == "":
		return "skipped: when = failure, and every step it follows succeeded"
	case (when == appconfig.WhenSuccess || when == "") && notOK != "":
		return "skipped: when = success, and " + notOK + " did not succeed"
	}
	return ""
}
