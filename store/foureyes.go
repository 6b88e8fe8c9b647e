package store

import (
	"context"
	"fmt"
)

// SetFourEyes sets whether the user who started an operation on the app's
// installs may approve its plans.
func (s *Store) SetFourEyes(ctx context.Context, orgID, appID string, on bool) (App, error) {
	res := s.db.WithContext(ctx).Model(&App{}).Where("org_id = ? AND id = ?", orgID, appID).Update("four_eyes", on)
	if res.Error != nil {
		return App{}, fmt.Errorf("set four eyes: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return App{}, fmt.Errorf("app %s: %w", appID, ErrNotFound)
	}
	return s.GetApp(ctx, orgID, appID)
}
