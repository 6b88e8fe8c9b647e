package offline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
)

// hook runs a hook step as the connected runner runs its action run: each
// of the action's steps an action job of its own process, rendered as the
// control plane renders it (jobmanifest.ActionStep: the bundle's scripts,
// the inputs the hook's trigger gives, the outputs of the steps before); a
// step that fails ends it. Its outputs become the action's, for the
// templates after it (.actions.<action>.outputs), as a succeeded run's.
func (d *deployment) hook(ctx context.Context, st *protocol.OfflineStep, h *contract.Hook) error {
	act, ok := d.cfg.Action(h.Action)
	if !ok {
		return fmt.Errorf("the config version has no action %q", h.Action)
	}
	data, err := d.data()
	if err != nil {
		return err
	}
	run, err := d.hookRun(act, h, data)
	if err != nil {
		return fmt.Errorf("action %s: %w", act.Name, err)
	}
	for i := range act.Steps {
		m, err := jobmanifest.ActionStep(d.cfg, data, run, i)
		if err != nil {
			return fmt.Errorf("action %s: render: %w", act.Name, err)
		}
		outs, err := d.actionJob(ctx, st, m)
		if err != nil {
			return fmt.Errorf("action %s, step %s: %w", act.Name, m.Step, err)
		}
		run.Earlier = append(run.Earlier, outs)
	}
	d.recordAction(st, act.Name, run.Earlier)
	return nil
}

// hookRun is the run a hook makes: the inputs its trigger gives (rendered
// with the install's data now), the action's defaults for the others.
func (d *deployment) hookRun(act *appconfig.Action, h *contract.Hook, data appconfig.Data) (jobmanifest.ActionRun, error) {
	var plain, secret map[string]string
	if i, ok := act.HookTrigger(h.Trigger, contract.OpProvision, h.Component); ok && len(act.Triggers[i].Inputs) > 0 {
		var err error
		if plain, secret, err = d.cfg.RenderHookInputs(act.Name, i, data); err != nil {
			return jobmanifest.ActionRun{}, fmt.Errorf("hook inputs: %w", err)
		}
	}
	given := maps.Clone(plain)
	if given == nil {
		given = map[string]string{}
	}
	maps.Copy(given, secret)
	typed, err := act.CheckRunInputs(given)
	if err != nil {
		msg := err.Error()
		for _, v := range secret {
			if v != "" {
				msg = strings.ReplaceAll(msg, v, appconfig.RedactedValue)
			}
		}
		return jobmanifest.ActionRun{}, errors.New("hook inputs: " + msg)
	}
	return jobmanifest.ActionRun{Action: act.Name, Inputs: typed, SensitiveInputs: slices.Collect(maps.Values(secret)),
		Scrub: data.Sensitive()}, nil
}

// actionJob runs one action step as a job, stopped at its timeout as the
// runner stops it, and returns its outputs: a step that exits non-zero or
// whose outputs file cannot be read fails.
func (d *deployment) actionJob(ctx context.Context, st *protocol.OfflineStep, m protocol.ActionManifest) (jobmanifest.ActionStepOutputs, error) {
	timeout := time.Duration(m.TimeoutMS) * time.Millisecond
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := d.runJob(ctx, st, protocol.JobTypeAction, m)
	if err != nil {
		return jobmanifest.ActionStepOutputs{}, err
	}
	var out protocol.ActionOutputs
	_ = json.Unmarshal(res.Outputs, &out) // none when it did not run
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return jobmanifest.ActionStepOutputs{}, fmt.Errorf("stopped at its timeout (%s)", timeout)
	case out.OutputsError != "":
		return jobmanifest.ActionStepOutputs{}, errors.New("outputs: " + out.OutputsError)
	case res.Status != protocol.StatusSucceeded && res.Error != "":
		return jobmanifest.ActionStepOutputs{}, errors.New(res.Error)
	case res.Status != protocol.StatusSucceeded || out.ExitCode != 0:
		return jobmanifest.ActionStepOutputs{}, fmt.Errorf("exit code %d", out.ExitCode)
	}
	so := jobmanifest.ActionStepOutputs{Step: m.Step, Outputs: map[string]string{}, Sensitive: map[string]string{}}
	for k, v := range out.Outputs {
		if slices.Contains(m.SensitiveOutputs, k) {
			so.Sensitive[k] = v
		} else {
			so.Outputs[k] = v
		}
	}
	return so, nil
}

// recordAction makes a hook's outputs its action's (its steps' merged, a
// later step's key replacing an earlier one's), adds the sensitive ones to
// what is scrubbed, and puts the others in the step's result.
func (d *deployment) recordAction(st *protocol.OfflineStep, action string, steps []jobmanifest.ActionStepOutputs) {
	vals := map[string]appconfig.Value{}
	for _, s := range steps {
		for k, v := range s.Outputs {
			vals[k] = appconfig.Value{Value: v}
		}
		for k, v := range s.Sensitive {
			vals[k] = appconfig.Value{Value: v, Sensitive: true}
		}
	}
	d.actions[action] = appconfig.ActionOutputs{RunID: "offline " + st.Name, Outputs: vals}
	if data, err := d.data(); err == nil {
		d.setScrub(data.Sensitive())
	}
	st.Outputs = map[string]any{}
	for name, v := range vals {
		d.showOutput(st, name, v.Value.(string), v.Value, v.Sensitive)
	}
}
