package store

import (
	"context"
	"fmt"

	"github.com/outpost-dev/outpost/contract/status"
)

// ActionOutputs are the outputs of an install's latest succeeded run of an
// action: every step's, merged in step order (a later step's value of a
// key wins). SensitiveOutputs were sealed at rest.
type ActionOutputs struct {
	RunID            string
	Outputs          map[string]string
	SensitiveOutputs map[string]string
}

// LatestActionOutputs reads, for each named action, the outputs of the
// install's latest succeeded run of it (the one that finished last). An
// action never run successfully is not in the answer.
func (s *Store) LatestActionOutputs(ctx context.Context, installID string, actions []string) (map[string]ActionOutputs, error) {
	out := make(map[string]ActionOutputs, len(actions))
	db := s.db.WithContext(ctx)
	for _, name := range actions {
		runs, err := list[ActionRun](db.Select("id").Limit(1), "finished_at DESC, id DESC",
			"install_id = ? AND action = ? AND status = ?", installID, name, status.JobSucceeded)
		if err != nil {
			return nil, fmt.Errorf("latest run of action %s: %w", name, err)
		}
		if len(runs) == 0 {
			continue
		}
		steps, err := s.ListActionRunSteps(ctx, runs[0].ID)
		if err != nil {
			return nil, fmt.Errorf("outputs of action run %s: %w", runs[0].ID, err)
		}
		out[name] = mergeStepOutputs(runs[0].ID, steps)
	}
	return out, nil
}

// mergeStepOutputs merges steps' outputs in order: a later step's key
// replaces an earlier one's, plain or sensitive.
func mergeStepOutputs(runID string, steps []ActionRunStep) ActionOutputs {
	ao := ActionOutputs{RunID: runID, Outputs: map[string]string{}, SensitiveOutputs: map[string]string{}}
	for _, st := range steps {
		for k, v := range st.Outputs {
			delete(ao.SensitiveOutputs, k)
			ao.Outputs[k] = v
		}
		for k, v := range st.SensitiveOutputs {
			delete(ao.Outputs, k)
			ao.SensitiveOutputs[k] = v
		}
	}
	return ao
}
