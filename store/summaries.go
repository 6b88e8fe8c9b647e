package store

import (
	"context"
	"slices"
	"sort"

	"github.com/outpost-dev/outpost/contract/status"
)

// InstallSummary is what a list of installs shows of each beyond its row:
// its newest operation, whether a step of that operation waits for
// approval, and what the drift checks found drifted.
type InstallSummary struct {
	LastOperation   *InstallOperation
	WaitingApproval bool
	Drifted         []string
}

// InstallSummaries are the org's installs' summaries by install ID (an
// install with no operation and no drift is absent), in three queries
// whatever the number of installs.
func (s *Store) InstallSummaries(ctx context.Context, orgID string) (map[string]InstallSummary, error) {
	db := s.db.WithContext(ctx)
	var ops []InstallOperation
	err := db.Where("org_id = ? AND created_at = (SELECT max(o2.created_at) FROM install_operations o2 WHERE o2.install_id = install_operations.install_id)", orgID).
		Order("id").Find(&ops).Error
	if err != nil {
		return nil, err
	}
	out := map[string]InstallSummary{}
	ids := make([]string, 0, len(ops))
	for i := range ops {
		out[ops[i].InstallID] = InstallSummary{LastOperation: &ops[i]} // on a tie of created_at, the greater ID
		ids = append(ids, ops[i].ID)
	}
	var waiting []string
	if err := db.Model(&InstallStep{}).Where("operation_id IN ? AND status = ?", ids, status.StepWaitingApproval).
		Distinct().Pluck("operation_id", &waiting).Error; err != nil {
		return nil, err
	}
	for _, op := range ops {
		if sum := out[op.InstallID]; sum.LastOperation.ID == op.ID && slices.Contains(waiting, op.ID) {
			sum.WaitingApproval = true
			out[op.InstallID] = sum
		}
	}
	var drifted []InstallDrift
	if err := db.Joins("JOIN installs ON installs.id = install_drift.install_id").
		Where("installs.org_id = ? AND install_drift.drifted", orgID).Find(&drifted).Error; err != nil {
		return nil, err
	}
	for _, d := range drifted {
		sum := out[d.InstallID]
		sum.Drifted = append(sum.Drifted, d.Name)
		sort.Strings(sum.Drifted)
		out[d.InstallID] = sum
	}
	return out, nil
}
