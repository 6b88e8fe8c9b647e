package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract/status"
)

// CreateInstall creates an install of an app with its inputs and its install
// runner. The runner's registration token is returned in plain text once.
func (s *Store) CreateInstall(ctx context.Context, orgID, appID, name string, inputs []InstallInput) (Install, Runner, string, error) {
	if err := validName("name", name); err != nil {
		return Install{}, Runner{}, "", err
	}
	seen := map[string]bool{}
	for i, in := range inputs {
		field := fmt.Sprintf("inputs[%d].name", i)
		if in.Name == "" {
			return Install{}, Runner{}, "", fieldErr(field, "is required")
		}
		if seen[in.Name] {
			return Install{}, Runner{}, "", fieldErr(field, "%q is given twice", in.Name)
		}
		seen[in.Name] = true
	}
	inst := Install{ID: NewID("ins"), OrgID: orgID, AppID: appID, Name: name, Status: status.InstallCreated, InputsVersion: 1}
	first := InputVersion{InstallID: inst.ID, Version: 1, Set: []string{}, Removed: []string{}, CreatedAt: s.now()}
	for _, in := range inputs {
		in.InstallID = inst.ID
		inst.Inputs = append(inst.Inputs, in)
		first.Set = append(first.Set, in.Name)
	}
	regToken := newRegistrationToken()
	hash := HashToken(regToken)
	r := Runner{ID: NewID("run"), OrgID: orgID, InstallID: &inst.ID, Kind: RunnerKindInstall, Name: "install-" + name,
		RegistrationTokenHash: &hash, Capabilities: []string{}, CreatedAt: s.now()}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var app App
		if err := tx.Where("org_id = ? AND id = ?", orgID, appID).First(&app).Error; err != nil {
			return fieldErr("app_id", "no app %s", appID)
		}
		if err := tx.Create(&inst).Error; err != nil {
			return uniqueConflict(err, "install", name)
		}
		if err := tx.Create(&first).Error; err != nil {
			return err
		}
		return tx.Create(&r).Error
	})
	if err != nil {
		return Install{}, Runner{}, "", fmt.Errorf("create install: %w", err)
	}
	return inst, r, regToken, nil
}

// ListInstalls lists an org's installs, of one app when appID is not empty.
func (s *Store) ListInstalls(ctx context.Context, orgID, appID string) ([]Install, error) {
	q := s.db.WithContext(ctx).Preload("Inputs").Where("org_id = ?", orgID)
	if appID != "" {
		q = q.Where("app_id = ?", appID)
	}
	out := []Install{}
	err := q.Order("name").Find(&out).Error
	return out, err
}

// GetInstall finds one of the org's installs, with its inputs.
func (s *Store) GetInstall(ctx context.Context, orgID, id string) (Install, error) {
	return first[Install](s.db.WithContext(ctx).Preload("Inputs"), "install "+id, "org_id = ? AND id = ?", orgID, id)
}

// GetInstallByID finds an install by ID alone, with its inputs (for the
// worker, which is given IDs by workflows, not an org).
func (s *Store) GetInstallByID(ctx context.Context, id string) (Install, error) {
	return first[Install](s.db.WithContext(ctx).Preload("Inputs"), "install "+id, "id = ?", id)
}

// DeleteInstall deletes an install and its runner; the runner's tokens stop
// working at once. Jobs and their logs are kept for the record.
func (s *Store) DeleteInstall(ctx context.Context, orgID, id string) error {
	err := deleteOrgRow(s.db.WithContext(ctx), "install", orgID, id, func(tx *gorm.DB, _ Install) error {
		var runnerIDs []string
		if err := tx.Model(&Runner{}).Where("install_id = ?", id).Pluck("id", &runnerIDs).Error; err != nil {
			return err
		}
		if len(runnerIDs) > 0 {
			if err := tx.Where("runner_id IN ?", runnerIDs).Delete(&RunnerToken{}).Error; err != nil {
				return err
			}
			if err := tx.Where("id IN ?", runnerIDs).Delete(&Runner{}).Error; err != nil {
				return err
			}
		}
		for _, rows := range []any{&InstallInput{}, &InputVersion{}, &AppliedRender{}, &InstallDrift{}} {
			if err := tx.Where("install_id = ?", id).Delete(rows).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete install: %w", err)
	}
	s.publish(ctx, TopicRunnerTokens)
	return nil
}
