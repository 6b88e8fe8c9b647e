package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// InputVersion is one accepted change of an install's inputs: which names it
// set or removed, never their values.
type InputVersion struct {
	InstallID string    `gorm:"primaryKey;size:32" json:"-"`
	Version   int       `gorm:"primaryKey;autoIncrement:false" json:"version"`
	Set       []string  `gorm:"serializer:json;type:text" json:"set"`
	Removed   []string  `gorm:"serializer:json;type:text" json:"removed"`
	CreatedAt time.Time `json:"created_at"`
}

// TableName keeps the table's name by what it holds.
func (InputVersion) TableName() string { return "install_input_versions" }

// InputsChange sets and removes some of an install's inputs.
type InputsChange struct {
	Set    []InstallInput
	Remove []string
	// Version is the inputs version the change was made against: another
	// change accepted meanwhile makes it ErrConflict.
	Version int
	// Operation may hold the install's lock (the update_inputs the change
	// starts); any other operation holding it makes the change ErrConflict.
	Operation string
}

// UpdateInputs applies a change to an install's inputs as their next
// version. A change that changes nothing records no version (nil).
func (s *Store) UpdateInputs(ctx context.Context, orgID, installID string, ch InputsChange) (*InputVersion, error) {
	var v *InputVersion
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		inst, err := first[Install](tx.Preload("Inputs"), "install "+installID, "org_id = ? AND id = ?", orgID, installID)
		if err != nil {
			return err
		}
		if err := checkInputsFree(tx, inst, ch); err != nil {
			return err
		}
		set, removed := inputsDiff(inst.Inputs, ch)
		if len(set) == 0 && len(removed) == 0 {
			return nil
		}
		v = &InputVersion{InstallID: installID, Version: inst.InputsVersion + 1, Set: []string{}, Removed: removed, CreatedAt: s.now()}
		// Only one change becomes the next version.
		res := update(tx.Where("id = ? AND inputs_version = ?", installID, inst.InputsVersion),
			&Install{InputsVersion: v.Version, UpdatedAt: s.now()}, "InputsVersion", "UpdatedAt")
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("the inputs of install %s changed meanwhile: try again: %w", inst.Name, ErrConflict)
		}
		for _, in := range set {
			in.InstallID = installID
			if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&in).Error; err != nil {
				return err
			}
			v.Set = append(v.Set, in.Name)
		}
		if len(removed) > 0 {
			if err := tx.Where("install_id = ? AND name IN ?", installID, removed).Delete(&InstallInput{}).Error; err != nil {
				return err
			}
		}
		return tx.Create(v).Error
	})
	if err != nil {
		return nil, fmt.Errorf("update inputs: %w", err)
	}
	return v, nil
}

// checkInputsFree refuses a change made against another inputs version, or
// while an operation other than the change's own holds the install.
func checkInputsFree(tx *gorm.DB, inst Install, ch InputsChange) error {
	if ch.Version != inst.InputsVersion {
		return fmt.Errorf("the inputs of install %s changed meanwhile (version %d, not %d): try again: %w",
			inst.Name, inst.InputsVersion, ch.Version, ErrConflict)
	}
	var locks []InstallLock
	if err := tx.Where("install_id = ?", inst.ID).Find(&locks).Error; err != nil {
		return err
	}
	for _, l := range locks {
		if l.OperationID != ch.Operation {
			return fmt.Errorf("install %s is busy with %s: its inputs change once it ends: %w", inst.Name, LockHolder(l.OperationID), ErrConflict)
		}
	}
	return nil
}

// inputsDiff is what a change really changes: the inputs it sets to a new
// value (or sensitivity), and the names it removes that were set.
func inputsDiff(current []InstallInput, ch InputsChange) (set []InstallInput, removed []string) {
	had := map[string]InstallInput{}
	for _, in := range current {
		had[in.Name] = in
	}
	for _, in := range ch.Set {
		if old, ok := had[in.Name]; !ok || old.Value != in.Value || old.Sensitive != in.Sensitive {
			set = append(set, in)
		}
	}
	removed = []string{}
	for _, name := range ch.Remove {
		if _, ok := had[name]; ok && !slices.Contains(removed, name) {
			removed = append(removed, name)
		}
	}
	return set, removed
}

// ListInputVersions lists an install's inputs versions, newest first.
func (s *Store) ListInputVersions(ctx context.Context, orgID, installID string) ([]InputVersion, error) {
	if _, err := s.GetInstall(ctx, orgID, installID); err != nil {
		return nil, err
	}
	return list[InputVersion](s.db.WithContext(ctx), "version DESC", "install_id = ?", installID)
}

// AppliedRender is the digest of the job (variables, environment or values)
// the sandbox or a component of an install was last applied with.
type AppliedRender struct {
	InstallID   string `gorm:"primaryKey;size:32"`
	Name        string `gorm:"primaryKey;size:200"` // status.SandboxStep or a component name
	Digest      string `gorm:"size:80;not null"`
	OperationID string `gorm:"size:32;not null"`
	UpdatedAt   time.Time
}

// TableName keeps the table's name by what it holds.
func (AppliedRender) TableName() string { return "install_renders" }

// SetAppliedRender records the digest a step was applied with.
func (s *Store) SetAppliedRender(ctx context.Context, r AppliedRender) error {
	r.UpdatedAt = s.now()
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(&r).Error
}

// DeleteAppliedRender forgets the digest of a torn-down sandbox or component.
func (s *Store) DeleteAppliedRender(ctx context.Context, installID, name string) error {
	return deleteInstallRow[AppliedRender](s.db.WithContext(ctx), installID, name)
}

// AppliedRenders are the install's applied digests, by sandbox or component
// name.
func (s *Store) AppliedRenders(ctx context.Context, installID string) (map[string]string, error) {
	return installRowsByName(s.db.WithContext(ctx), installID, func(r AppliedRender) (string, string) { return r.Name, r.Digest })
}

// MarkInputsSensitive makes the install's inputs of these names sensitive,
// sealing each value that was stored plain (a config that declares them
// sensitive is being deployed); inputs already sensitive, or unset, are left.
func (s *Store) MarkInputsSensitive(ctx context.Context, installID string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var plain []InstallInput
		if err := tx.Where("install_id = ? AND name IN ? AND NOT sensitive", installID, names).Find(&plain).Error; err != nil {
			return fmt.Errorf("read inputs of %s: %w", installID, err)
		}
		for _, in := range plain {
			was := in.Value
			in.Sensitive = true
			if err := in.sealed(tx, false); err != nil { // in.Value is now sealed
				return err
			}
			res := tx.Model(&InstallInput{}).Where("install_id = ? AND name = ? AND value = ? AND NOT sensitive", installID, in.Name, was).
				Updates(map[string]any{"sensitive": true, "value": in.Value})
			if res.Error != nil {
				return fmt.Errorf("seal input %s of %s: %w", in.Name, installID, res.Error)
			}
		}
		return nil
	})
}
