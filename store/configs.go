package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ConfigComponent is a component as a synced app config defines it.
type ConfigComponent struct {
	Name string
	Type string
	// Dependencies are the effective dependencies (declared and implied by
	// templates).
	Dependencies []string
	Config       JSONMap
}

// NewAppConfig is a validated app config to store.
type NewAppConfig struct {
	// Archive is the config directory as a gzipped tar.
	Archive []byte
	// Description, if not empty, becomes the app's description.
	Description string
	Components  []ConfigComponent
}

// Archive returns the config directory (a gzipped tar) of a stored version.
// Content holds it base64-encoded: the column is text.
func (c AppConfig) Archive() ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(c.Content)
	if err != nil {
		return nil, fmt.Errorf("app config %s v%d: decode content: %w", c.AppID, c.Version, err)
	}
	return b, nil
}

// SyncAppConfig stores cfg as the app's next version (the latest + 1) and
// makes the app's components match it, in one transaction: components the
// config no longer has are deleted, the others created or updated in place
// (keeping their IDs). When cfg.Archive is the latest version's archive byte
// for byte, no version is added (created is false) but the components are
// still made to match. Concurrent syncs of one app are serialised.
func (s *Store) SyncAppConfig(ctx context.Context, orgID, appID string, cfg NewAppConfig) (ac AppConfig, created bool, err error) {
	content := base64.StdEncoding.EncodeToString(cfg.Archive)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var app App
		q := tx.Where("org_id = ? AND id = ?", orgID, appID)
		if s.dialect == Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.First(&app).Error; err != nil {
			return notFound(err, "app "+appID)
		}
		var latest AppConfig
		err := tx.Where("app_id = ?", appID).Order("version DESC").Limit(1).Find(&latest).Error
		if err != nil {
			return err
		}
		if latest.ID != "" && latest.Content == content {
			ac = latest
		} else {
			ac = AppConfig{ID: NewID("cfg"), OrgID: orgID, AppID: appID, Version: latest.Version + 1, Content: content, CreatedAt: s.now()}
			if err := tx.Create(&ac).Error; err != nil {
				return uniqueConflict(err, "app config version", fmt.Sprint(ac.Version))
			}
			created = true
		}
		if cfg.Description != "" && cfg.Description != app.Description {
			if err := update(tx.Where("id = ?", app.ID), &App{Description: cfg.Description, UpdatedAt: s.now()}, "Description", "UpdatedAt").Error; err != nil {
				return err
			}
		}
		return matchComponents(tx, s.now, app, cfg.Components)
	})
	if err != nil {
		return AppConfig{}, false, fmt.Errorf("sync app config: %w", err)
	}
	return ac, created, nil
}

// matchComponents makes the app's components those of want.
func matchComponents(tx *gorm.DB, now func() time.Time, app App, want []ConfigComponent) error {
	var have []Component
	if err := tx.Where("app_id = ?", app.ID).Find(&have).Error; err != nil {
		return err
	}
	byName := map[string]Component{}
	for _, c := range have {
		byName[c.Name] = c
	}
	keep := map[string]bool{}
	for _, w := range want {
		keep[w.Name] = true
	}
	for _, c := range have {
		if !keep[c.Name] {
			if err := tx.Delete(&c).Error; err != nil {
				return err
			}
		}
	}
	for _, w := range want {
		deps := slices.Clone(w.Dependencies)
		if deps == nil {
			deps = []string{}
		}
		cfg := w.Config
		if cfg == nil {
			cfg = JSONMap{}
		}
		c, exists := byName[w.Name]
		if !exists {
			c = Component{ID: NewID("cmp"), OrgID: app.OrgID, AppID: app.ID, Name: w.Name}
		}
		c.Type, c.Dependencies, c.Config = w.Type, deps, cfg
		if !exists {
			if err := tx.Create(&c).Error; err != nil {
				return uniqueConflict(err, "component", c.Name)
			}
			continue
		}
		c.UpdatedAt = now()
		if err := tx.Save(&c).Error; err != nil {
			return err
		}
	}
	return nil
}

// ListAppConfigs lists an app's config versions, newest first, without
// their content.
func (s *Store) ListAppConfigs(ctx context.Context, orgID, appID string) ([]AppConfig, error) {
	if _, err := s.GetApp(ctx, orgID, appID); err != nil {
		return nil, err
	}
	return list[AppConfig](s.db.WithContext(ctx).Omit("content"), "version DESC", "org_id = ? AND app_id = ?", orgID, appID)
}

// GetAppConfig finds one version of an app's config.
func (s *Store) GetAppConfig(ctx context.Context, orgID, appID string, version int) (AppConfig, error) {
	if _, err := s.GetApp(ctx, orgID, appID); err != nil {
		return AppConfig{}, err
	}
	return first[AppConfig](s.db.WithContext(ctx), fmt.Sprintf("app %s config version %d", appID, version),
		"org_id = ? AND app_id = ? AND version = ?", orgID, appID, version)
}

// LatestAppConfig is the config in force for an app: its newest version.
// An app that was never synced is ErrNotFound. Parse the archive with
// appconfig.FromArchive.
func (s *Store) LatestAppConfig(ctx context.Context, orgID, appID string) (AppConfig, error) {
	if _, err := s.GetApp(ctx, orgID, appID); err != nil {
		return AppConfig{}, err
	}
	return first[AppConfig](s.db.WithContext(ctx).Order("version DESC"), fmt.Sprintf("app %s has no config yet", appID),
		"org_id = ? AND app_id = ?", orgID, appID)
}

// LatestConfigVersion is the version of the config in force for an app, 0
// when it was never synced.
func (s *Store) LatestConfigVersion(ctx context.Context, orgID, appID string) (int, error) {
	if _, err := s.GetApp(ctx, orgID, appID); err != nil {
		return 0, err
	}
	var versions []int
	err := s.db.WithContext(ctx).Model(&AppConfig{}).Where("org_id = ? AND app_id = ?", orgID, appID).
		Order("version DESC").Limit(1).Pluck("version", &versions).Error
	if err != nil || len(versions) == 0 {
		return 0, err
	}
	return versions[0], nil
}
