package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract/status"
)

// What the records of action runs and runbook runs share: the run is
// created queued with its steps pending, its sensitive inputs sealed, and
// finished with its pending steps skipped.

// runHead points at the fields of a run (ActionRun, RunbookRun) that
// creating, sealing and opening it read and fill in.
type runHead struct {
	table             string // its sealed inputs' place is <table>.sensitive_inputs/<ID>
	id                *string
	installID         string
	inputs, sensitive *map[string]string
	sealed            *string
	status            *status.Job
	createdAt         *time.Time
}

func (h runHead) place() string { return h.table + ".sensitive_inputs/" + *h.id }

// sealInputs seals the run's sensitive inputs with the install's key.
func (h runHead) sealInputs(tx *gorm.DB) (err error) {
	*h.sealed, err = sealMap(tx, h.installID, h.place(), *h.sensitive)
	return err
}

// openInputs opens the sensitive inputs sealInputs sealed.
func (h runHead) openInputs(tx *gorm.DB) (err error) {
	*h.sensitive, err = openMap(tx, h.place(), *h.sealed)
	return err
}

// createRun records run, queued (with an ID of prefix when it has none),
// and the rows steps makes for its ID, in one transaction with also (nil:
// nothing more); what names the run in the error.
func createRun[S any](s *Store, ctx context.Context, what, prefix string, run any, head runHead, steps func(runID string) []S,
	also func(tx *gorm.DB) error) error {
	if *head.id == "" {
		*head.id = NewID(prefix)
	}
	if *head.inputs == nil {
		*head.inputs = map[string]string{}
	}
	sensitive := *head.sensitive
	*head.status, *head.createdAt = status.JobQueued, s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		if err := tx.Create(run).Error; err != nil {
			return err
		}
		rows := steps(*head.id)
		if len(rows) == 0 {
			return nil
		}
		return tx.Create(&rows).Error
	})
	if err != nil {
		return fmt.Errorf("create %s: %w", what, err)
	}
	*head.sensitive = sensitive
	return nil
}

// finishRun records how a run ended (ended: its Status, Error and
// FinishedAt) and its steps still pending skipped (skipped: a step of
// status ActionStepSkipped), in one transaction with also (nil: nothing
// more); what names the run in the error.
func finishRun[R, S any](s *Store, ctx context.Context, what, runID string, ended *R, skipped *S, also func(tx *gorm.DB) error) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		if err := update(tx.Where("run_id = ? AND status = ?", runID, ActionStepPending), skipped, "Status").Error; err != nil {
			return err
		}
		return update(tx.Where("id = ?", runID), ended, "Status", "Error", "FinishedAt").Error
	})
	if err != nil {
		return fmt.Errorf("finish %s %s: %w", what, runID, err)
	}
	return nil
}

// sealMap seals a map of secrets as one JSON value (none: "").
func sealMap(tx *gorm.DB, scope, place string, m map[string]string) (string, error) {
	if len(m) == 0 {
		return "", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("seal %s: %w", place, err)
	}
	return sealValue(tx, scope, place, string(b))
}

// openMap opens what sealMap sealed.
func openMap(tx *gorm.DB, place, v string) (map[string]string, error) {
	if v == "" {
		return nil, nil
	}
	pt, err := openValue(tx, place, v)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := json.Unmarshal([]byte(pt), &m); err != nil {
		return nil, fmt.Errorf("open %s: %w", place, err)
	}
	return m, nil
}
