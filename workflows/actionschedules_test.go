package workflows

import (
	"context"
	"testing"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// An operation that brings the install to a config version reconciles its
// action schedules with that version once it succeeded; a deprovision with
// none (0); a failed one, a plan-only one and other kinds do not.
func TestOperationReconcilesActionSchedules(t *testing.T) {
	for _, tc := range []struct {
		name     string
		kind     string
		planOnly bool
		failStep bool
		want     []int // the versions ReconcileActionSchedules was called with
	}{
		{"provision", store.OpProvision, false, false, []int{7}},
		{"deploy_config", contract.OpDeployConfig, false, false, []int{7}},
		{"reprovision", contract.OpReprovision, false, false, []int{7}},
		{"deprovision", contract.OpDeprovision, false, false, []int{0}},
		{"failed provision", store.OpProvision, false, true, nil},
		{"plan-only provision", store.OpProvision, true, false, nil},
		{"update_inputs", contract.OpUpdateInputs, false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeInstall(t, contract.OperationPlan{InstallID: "ins_1", Kind: tc.kind, ConfigVersion: 7, PlanOnly: tc.planOnly,
				ApprovalMode: status.ApproveAll, Steps: steps("sandbox")})
			if tc.failStep {
				f.planned = func(string, bool) contract.PlanSummary { return contract.PlanSummary{Failed: true, Error: "boom"} }
			}
			var got []int
			f.env.OnActivity(contract.ReconcileActionSchedules, mockAny, "ins_1", mockAny).Return(func(_ context.Context, _ string, v int) error {
				got = append(got, v)
				return nil
			}).Maybe()
			f.run()
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Errorf("ReconcileActionSchedules called with versions %v, want %v", got, tc.want)
			}
		})
	}
}
