package activities

import (
	"context"

	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
)

// stepManifest renders step index of a run (jobmanifest.ActionStep): the
// action's env_vars with the run's inputs, and the outputs of the steps
// before it; every sensitive value the env may hold is in Scrub.
func (a *Actions) stepManifest(ctx context.Context, ar actionRun, index int) (protocol.ActionManifest, error) {
	data, err := a.render.renderData(ctx, ar.cfg, ar.inst)
	if err != nil {
		return protocol.ActionManifest{}, err
	}
	typed, err := ar.action.CheckRunInputs(mergedInputs(ar.run.Inputs, ar.run.SensitiveInputs))
	if err != nil {
		return protocol.ActionManifest{}, nonRetryable("action inputs", err)
	}
	steps, err := a.store.ListActionRunSteps(ctx, ar.run.ID)
	if err != nil {
		return protocol.ActionManifest{}, err
	}
	run := jobmanifest.ActionRun{Action: ar.run.Action, Inputs: typed, Scrub: sensitiveValues(data)}
	for _, v := range ar.run.SensitiveInputs {
		run.SensitiveInputs = append(run.SensitiveInputs, v)
	}
	for _, s := range steps[:min(index, len(steps))] {
		run.Earlier = append(run.Earlier, jobmanifest.ActionStepOutputs{Step: s.Name, Outputs: s.Outputs, Sensitive: s.SensitiveOutputs})
	}
	m, err := jobmanifest.ActionStep(ar.cfg, data, run, index)
	if err != nil {
		return protocol.ActionManifest{}, nonRetryable("render", err)
	}
	return m, nil
}
