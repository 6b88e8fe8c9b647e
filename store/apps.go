package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract"
)

// CreateApp creates an app in an org.
func (s *Store) CreateApp(ctx context.Context, orgID, name, description string) (App, error) {
	if err := validName("name", name); err != nil {
		return App{}, err
	}
	app := App{ID: NewID("app"), OrgID: orgID, Name: name, Description: description}
	if err := s.db.WithContext(ctx).Create(&app).Error; err != nil {
		return App{}, fmt.Errorf("create app: %w", uniqueConflict(err, "app", name))
	}
	return app, nil
}

// ListApps lists an org's apps.
func (s *Store) ListApps(ctx context.Context, orgID string) ([]App, error) {
	return list[App](s.db.WithContext(ctx), "name", "org_id = ?", orgID)
}

// GetApp finds one of the org's apps.
func (s *Store) GetApp(ctx context.Context, orgID, id string) (App, error) {
	return first[App](s.db.WithContext(ctx), "app "+id, "org_id = ? AND id = ?", orgID, id)
}

// DeleteApp deletes an app and its components. An app that still has
// installs cannot be deleted (ErrConflict): delete the installs first.
func (s *Store) DeleteApp(ctx context.Context, orgID, id string) error {
	return deleteOrgRow(s.db.WithContext(ctx), "app", orgID, id, func(tx *gorm.DB, app App) error {
		var n int64
		if err := tx.Model(&Install{}).Where("app_id = ?", id).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("app %s has %d install(s); delete them first: %w", app.Name, n, ErrConflict)
		}
		for _, m := range []any{&Component{}, &AppConfig{}} {
			if err := tx.Where("app_id = ?", id).Delete(m).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

// CreateComponent adds a component to an app. Dependencies must name
// components of the same app that already exist, so no cycle can form.
func (s *Store) CreateComponent(ctx context.Context, orgID string, c Component) (Component, error) {
	if err := validName("name", c.Name); err != nil {
		return Component{}, err
	}
	if !slices.Contains(contract.ComponentTypes, c.Type) {
		return Component{}, fieldErr("type", "%q is not a component type (one of %s)", c.Type, strings.Join(contract.ComponentTypes, ", "))
	}
	if c.Dependencies == nil {
		c.Dependencies = []string{}
	}
	if c.Config == nil {
		c.Config = JSONMap{}
	}
	c.ID, c.OrgID = NewID("cmp"), orgID
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var app App
		if err := tx.Where("org_id = ? AND id = ?", orgID, c.AppID).First(&app).Error; err != nil {
			return notFound(err, "app "+c.AppID)
		}
		for i, dep := range c.Dependencies {
			var n int64
			if err := tx.Model(&Component{}).Where("app_id = ? AND name = ?", c.AppID, dep).Count(&n).Error; err != nil {
				return err
			}
			if n == 0 {
				return fieldErr(fmt.Sprintf("dependencies[%d]", i), "no component %q in app %s", dep, app.Name)
			}
		}
		return uniqueConflict(tx.Create(&c).Error, "component", c.Name)
	})
	if err != nil {
		return Component{}, fmt.Errorf("create component: %w", err)
	}
	return c, nil
}

// ListComponents lists an app's components.
func (s *Store) ListComponents(ctx context.Context, orgID, appID string) ([]Component, error) {
	if _, err := s.GetApp(ctx, orgID, appID); err != nil {
		return nil, err
	}
	return list[Component](s.db.WithContext(ctx), "name", "org_id = ? AND app_id = ?", orgID, appID)
}

// GetComponent finds one of the org's components.
func (s *Store) GetComponent(ctx context.Context, orgID, id string) (Component, error) {
	return first[Component](s.db.WithContext(ctx), "component "+id, "org_id = ? AND id = ?", orgID, id)
}

// DeleteComponent deletes a component no other component depends on.
func (s *Store) DeleteComponent(ctx context.Context, orgID, id string) error {
	return deleteOrgRow(s.db.WithContext(ctx), "component", orgID, id, func(tx *gorm.DB, c Component) error {
		var siblings []Component
		if err := tx.Where("app_id = ? AND id <> ?", c.AppID, id).Find(&siblings).Error; err != nil {
			return err
		}
		for _, o := range siblings {
			if slices.Contains(o.Dependencies, c.Name) {
				return fmt.Errorf("component %s depends on %s: %w", o.Name, c.Name, ErrConflict)
			}
		}
		return nil
	})
}
