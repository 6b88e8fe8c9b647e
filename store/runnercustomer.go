package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/outpost-dev/outpost/protocol"
)

// UpdateRunnerCustomer records the customer's policy, pause and consents as
// the runner reported them.
func (s *Store) UpdateRunnerCustomer(ctx context.Context, runnerID string, p *protocol.CustomerPolicy, st protocol.CustomerState) error {
	r := Runner{CustomerPolicy: p, PausedSince: st.PausedSince, Consents: st.Consents}
	err := s.db.WithContext(ctx).Model(&Runner{}).Where("id = ?", runnerID).
		Select("customer_policy", "paused_since", "consents").Updates(&r).Error
	if err != nil {
		return fmt.Errorf("update runner's customer policy: %w", err)
	}
	return nil
}

// JobOrigin is where a job comes from, read from its key (which starts with
// its workflow's ID, contract/ids.go): the install, the operation, debug
// command or action run, and who started it.
func (s *Store) JobOrigin(ctx context.Context, j Job) (protocol.JobOrigin, error) {
	var o protocol.JobOrigin
	if j.InstallID != nil {
		o.InstallID = *j.InstallID
	}
	parts := strings.Split(j.Key, "/")
	if len(parts) < 3 || parts[0] != "install" {
		return o, nil // a build's, or a key of another shape
	}
	db := s.db.WithContext(ctx)
	if parts[2] == "command" && len(parts) > 3 {
		var c InstallCommand
		err := db.Select("id", "started_by").Where("id = ? AND install_id = ?", parts[3], parts[1]).Take(&c).Error
		if err != nil && !errors.Is(err, ErrNotFound) {
			return o, notFound(err, "command "+parts[3])
		}
		o.CommandID, o.StartedBy = parts[3], c.StartedBy
		return o, nil
	}
	if parts[2] == "action" && len(parts) > 4 {
		// By workflow ID: a scheduled run's is the schedule's ID and a time, not the run's.
		wfID := strings.Join(parts[:5], "/")
		var runs []ActionRun
		err := db.Select("id", "started_by").Where("workflow_id = ? AND install_id = ?", wfID, parts[1]).Limit(1).Find(&runs).Error
		if err != nil {
			return o, fmt.Errorf("job origin: action run of %s: %w", wfID, err)
		}
		if len(runs) == 1 {
			o.ActionRunID, o.StartedBy = runs[0].ID, runs[0].StartedBy
		}
		return o, nil
	}
	var prefixes []string // the operation's workflow ID is one of the key's prefixes
	for n := 3; n <= len(parts); n++ {
		prefixes = append(prefixes, strings.Join(parts[:n], "/"))
	}
	var ops []InstallOperation
	err := db.Select("id", "kind", "started_by").Where("workflow_id IN ? AND install_id = ?", prefixes, parts[1]).
		Order("created_at DESC").Limit(1).Find(&ops).Error
	if err != nil {
		return o, fmt.Errorf("job origin: %w", err)
	}
	if len(ops) == 1 {
		o.OperationID, o.OperationKind, o.StartedBy = ops[0].ID, ops[0].Kind, ops[0].StartedBy
	}
	return o, nil
}
