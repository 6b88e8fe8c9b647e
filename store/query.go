package store

import "gorm.io/gorm"

// first reads the first row of T (by primary key) matching the condition;
// no row is ErrNotFound, named by what. db carries the context and any
// Preload or Order.
func first[T any](db *gorm.DB, what, cond string, args ...any) (T, error) {
	var row T
	if err := db.Where(cond, args...).First(&row).Error; err != nil {
		var zero T
		return zero, notFound(err, what)
	}
	return row, nil
}

// newestOfInstall lists up to limit of an install's rows of T (jobs,
// operations, commands), newest first.
func newestOfInstall[T any](db *gorm.DB, orgID, installID string, limit int) ([]T, error) {
	out := []T{}
	err := db.Where("org_id = ? AND install_id = ?", orgID, installID).
		Order("created_at DESC, id DESC").Limit(limit).Find(&out).Error
	return out, err
}
