package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract/status"
)

// RecordStepDecision records the decision on a step waiting for approval,
// before the API signals the workflow: the workflow reads it back
// (StepDecision) and applies a plan only when it says approved, so a signal
// sent to Temporal by anyone else applies nothing.
// The same decision again is accepted (the signal may be sent again); a
// step not waiting, or decided otherwise, is a conflict.
func (s *Store) RecordStepDecision(ctx context.Context, opID, name string, decision status.Decision, by Decider) error {
	if decision != status.DecisionApproved && decision != status.DecisionDenied {
		return fieldErr("decision", "%q is not one of %s, %s", decision, status.DecisionApproved, status.DecisionDenied)
	}
	waiting := s.db.WithContext(ctx).Model(&InstallStep{}).
		Where("operation_id = ? AND name = ? AND status = ?", opID, name, status.StepWaitingApproval).Session(&gorm.Session{})
	res := waiting.Where("decision = ''").
		Updates(map[string]any{"decision": decision, "decided_by": by.Name, "decided_by_user": by.UserID, "decided_at": s.now()})
	if res.Error != nil {
		return fmt.Errorf("record decision on step %s: %w", name, res.Error)
	}
	if res.RowsAffected == 1 {
		return nil
	}
	var same int64 // the same decision again keeps its first decider
	if err := waiting.Where("decision = ?", decision).Count(&same).Error; err != nil {
		return fmt.Errorf("record decision on step %s: %w", name, err)
	}
	if same == 0 {
		return fmt.Errorf("step %s of operation %s is not waiting for approval, or was decided otherwise: %w", name, opID, ErrConflict)
	}
	return nil
}

// Decider is who decides a plan: the user's ID ("" for a token made before
// users) and name (else the token's).
type Decider struct {
	UserID, Name string
}

// StepDecision is the decision recorded on a step's plan ("" when none).
func (s *Store) StepDecision(ctx context.Context, opID, name string) (status.Decision, error) {
	st, err := s.GetStep(ctx, opID, name)
	return st.Decision, err
}
