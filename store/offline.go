package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// OpOfflineDeploy is an imported offline deploy (no workflow runs it).
const OpOfflineDeploy = contract.OpOfflineDeploy

// SourceOffline is the Source of an operation imported from an offline
// deploy's result.
const SourceOffline = "offline"

// JobTypeOfflineStep is the type of the job that holds an imported offline
// step's log, so that it reads like a connected step's (GET /jobs/{id}/logs).
const JobTypeOfflineStep = "offline_step"

// offlineLogChunk bounds one log chunk of an imported step.
const offlineLogChunk = 64 << 10

// OfflineResult names one imported offline result: importing the same one
// again finds OperationID.
type OfflineResult struct {
	InstallID   string    `gorm:"primaryKey;size:32"`
	BundleIndex string    `gorm:"primaryKey;size:100"`
	StartedAt   time.Time `gorm:"primaryKey"`
	OperationID string    `gorm:"size:32;not null"`
	CreatedAt   time.Time `gorm:"not null"`
}

// OfflineImport is a checked offline result (protocol.OfflineResult.Check)
// to record on an install, and who imports it.
type OfflineImport struct {
	OrgID, InstallID string
	Result           protocol.OfflineResult
	StartedBy        string
	StartedByUser    string
}

// ImportOfflineResult records an offline deploy's result as a finished
// operation of the install (kind offline_deploy, source offline): its steps
// with their times, errors, policies and logs (each log in a job of its
// own), the succeeded steps' outputs as the install's, and, when it
// succeeded, the install at its config version, active. The same result
// again (bundle index and start) answers the operation it made, created
// false. While another operation holds the install it is ErrConflict naming
// it: the lock is taken and given back within the import.
func (s *Store) ImportOfflineResult(ctx context.Context, in OfflineImport) (op InstallOperation, created bool, err error) {
	r := in.Result
	started := r.StartedAt.UTC().Truncate(time.Microsecond)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var inst Install
		if err := tx.Where("org_id = ? AND id = ?", in.OrgID, in.InstallID).First(&inst).Error; err != nil {
			return notFound(err, "install "+in.InstallID)
		}
		seen, err := offlineSeen(tx, inst.ID, r.BundleIndex, started)
		if err != nil || seen != "" {
			op.ID = seen
			return err
		}
		op = offlineOperation(in, inst, started)
		if err := s.lockInstall(tx, inst, op.ID); err != nil {
			return err
		}
		current, err := offlineIsCurrent(tx, inst, started)
		if err != nil {
			return err
		}
		if err := s.recordOffline(tx, inst, op, r, current); err != nil {
			return err
		}
		created = true
		return unlockInstall(tx, op.ID)
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) || errors.Is(err, ErrConflict) {
		// The same result imported at the same instant (the install was found
		// in the org before either failure): the one that won answers.
		seen, again := offlineSeen(s.db.WithContext(ctx), in.InstallID, r.BundleIndex, started)
		if again != nil || seen == "" {
			return InstallOperation{}, false, fmt.Errorf("import offline result: %w", err)
		}
		op.ID, created = seen, false
	} else if err != nil {
		return InstallOperation{}, false, fmt.Errorf("import offline result: %w", err)
	}
	op, err = s.GetOperation(ctx, in.OrgID, op.ID)
	return op, created, err
}

// offlineSeen is the operation an offline result (bundle index and start)
// was recorded as, or "" when it was not.
func offlineSeen(db *gorm.DB, installID, bundleIndex string, started time.Time) (string, error) {
	var seen OfflineResult
	err := db.Where("install_id = ? AND bundle_index = ? AND started_at = ?", installID, bundleIndex, started).First(&seen).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	return seen.OperationID, err
}

// offlineOperation is the finished operation an offline result becomes.
func offlineOperation(in OfflineImport, inst Install, started time.Time) InstallOperation {
	r := in.Result
	finished := r.FinishedAt.UTC()
	st := status.OpFailed
	if r.Status == "succeeded" {
		st = status.OpSucceeded
	}
	return InstallOperation{ID: NewID("op"), OrgID: inst.OrgID, InstallID: inst.ID, Kind: OpOfflineDeploy,
		ApprovalMode: inst.ApprovalMode, ConfigVersion: r.ConfigVersion, Status: st, Source: SourceOffline,
		BundleIndex: r.BundleIndex, StartedBy: in.StartedBy, StartedByUser: in.StartedByUser, Error: r.Error,
		CreatedAt: started, FinishedAt: &finished}
}

// offlineIsCurrent says whether a result started at started is the
// install's latest word: no result imported before started later, and the
// install not deprovisioned (or being). Only then do its outputs and version
// become the install's; an older or late one is recorded, and that is all.
func offlineIsCurrent(tx *gorm.DB, inst Install, started time.Time) (bool, error) {
	if inst.Status == status.InstallDeprovisioning || inst.Status == status.InstallDeprovisioned {
		return false, nil
	}
	var later int64
	err := tx.Model(&OfflineResult{}).Where("install_id = ? AND started_at > ?", inst.ID, started).Count(&later).Error
	return later == 0, err
}

// recordOffline writes op, its steps, their logs and (when current) outputs,
// the install's version and the result's name, in tx.
func (s *Store) recordOffline(tx *gorm.DB, inst Install, op InstallOperation, r protocol.OfflineResult, current bool) error {
	if err := tx.Omit("Steps").Create(&op).Error; err != nil {
		return err
	}
	for i, st := range r.Steps {
		if err := s.recordOfflineStep(tx, op, i, st, current); err != nil {
			return fmt.Errorf("steps[%d]: %w", i, err)
		}
	}
	if op.Status == status.OpSucceeded && current {
		if err := update(tx.Where("id = ?", inst.ID), &Install{Status: status.InstallActive, ConfigVersion: op.ConfigVersion},
			"Status", "ConfigVersion").Error; err != nil {
			return err
		}
	}
	return tx.Create(&OfflineResult{InstallID: inst.ID, BundleIndex: op.BundleIndex, StartedAt: op.CreatedAt,
		OperationID: op.ID, CreatedAt: s.now()}).Error
}

// recordOfflineStep writes one step, its log (as a finished job's) and, for
// the sandbox or a component that succeeded, its outputs.
func (s *Store) recordOfflineStep(tx *gorm.DB, op InstallOperation, i int, st protocol.OfflineStep, current bool) error {
	start, end := st.StartedAt.UTC(), st.FinishedAt.UTC()
	row := InstallStep{ID: NewID("stp"), OperationID: op.ID, Name: st.Name, Status: status.Step(st.Status),
		Error: st.Error, StartedAt: &start, FinishedAt: &end}
	if st.Policy != nil {
		row.Policies = []protocol.PolicyResult{*st.Policy}
	}
	if st.Log != "" {
		jobID, err := s.offlineLog(tx, op, i, st)
		if err != nil {
			return err
		}
		row.ApplyJobID = &jobID
	}
	if err := tx.Create(&row).Error; err != nil {
		return err
	}
	name := st.Component
	if st.Kind == protocol.OfflineStepSandbox {
		name = status.SandboxStep
	}
	if !current || name == "" || st.Status != "succeeded" || len(st.Outputs) == 0 {
		return nil
	}
	outs := protocol.TerraformApplyOutputs{Outputs: map[string]protocol.TerraformOutput{}}
	for k, v := range st.Outputs {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("output %s: %w", k, err)
		}
		outs.Outputs[k] = protocol.TerraformOutput{Value: raw}
	}
	return s.mergeOfflineOutputs(tx, op.InstallID, name, outs)
}

// mergeOfflineOutputs makes an offline step's outputs the install's, keeping
// the sensitive ones stored before (an offline result carries none), sealed
// at rest as every install output is (a create, for BeforeCreate to seal).
func (s *Store) mergeOfflineOutputs(tx *gorm.DB, installID, name string, outs protocol.TerraformApplyOutputs) error {
	var old InstallOutput
	err := tx.Where("install_id = ? AND name = ?", installID, name).First(&old).Error
	switch {
	case err == nil:
		var prev protocol.TerraformApplyOutputs
		if err := json.Unmarshal([]byte(old.Outputs), &prev); err != nil {
			return fmt.Errorf("outputs of %s: %w", name, err)
		}
		for k, o := range prev.Outputs {
			if _, set := outs.Outputs[k]; o.Sensitive && !set {
				outs.Outputs[k] = o
			}
		}
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return err
	}
	b, err := json.Marshal(outs)
	if err != nil {
		return err
	}
	row := InstallOutput{InstallID: installID, Name: name, Outputs: string(b), UpdatedAt: s.now()}
	return tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error
}

// offlineLog keeps a step's log as a finished job's log (not sealed, like
// every step's job log), in chunks.
func (s *Store) offlineLog(tx *gorm.DB, op InstallOperation, i int, st protocol.OfflineStep) (string, error) {
	start, end := st.StartedAt.UTC(), st.FinishedAt.UTC()
	js := status.JobSucceeded
	if st.Status == "failed" {
		js = status.JobFailed
	}
	installID := op.InstallID
	job := Job{ID: NewID("job"), OrgID: op.OrgID, InstallID: &installID, Key: fmt.Sprintf("offline/%s/%d", op.ID, i),
		Type: JobTypeOfflineStep, Status: js, Attempt: 1, Error: st.Error, CreatedAt: start, StartedAt: &start,
		FinishedAt: &end, UpdatedAt: s.now()}
	if err := tx.Create(&job).Error; err != nil {
		return "", err
	}
	var chunks []JobLogChunk
	for seq, rest := int64(1), strings.ReplaceAll(st.Log, "\x00", ""); rest != ""; seq++ {
		n := min(len(rest), offlineLogChunk)
		for n < len(rest) && n > 0 && !utf8.RuneStart(rest[n]) {
			n-- // a chunk ends between runes
		}
		chunks = append(chunks, JobLogChunk{JobID: job.ID, Attempt: 1, Seq: seq, Stream: "stdout", Data: rest[:n], Time: end})
		rest = rest[n:]
	}
	return job.ID, tx.CreateInBatches(chunks, 100).Error
}
