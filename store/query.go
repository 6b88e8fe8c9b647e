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

// list reads the rows of T matching the condition, in order. No row is an
// empty list, which the API shows as [] (not null).
func list[T any](db *gorm.DB, order, cond string, args ...any) ([]T, error) {
	out := []T{}
	err := db.Where(cond, args...).Order(order).Find(&out).Error
	return out, err
}

// installRowsByName reads the install's rows of T, one per sandbox or
// component name, as name → value (kv gives both of a row).
func installRowsByName[T any](db *gorm.DB, installID string, kv func(T) (string, string)) (map[string]string, error) {
	var rows []T
	if err := db.Where("install_id = ?", installID).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range rows {
		k, v := kv(r)
		out[k] = v
	}
	return out, nil
}

// deleteInstallRow deletes the install's row of T of a sandbox or component.
func deleteInstallRow[T any](db *gorm.DB, installID, name string) error {
	var row T
	return db.Where("install_id = ? AND name = ?", installID, name).Delete(&row).Error
}

// deleteOrgRow deletes one of the org's rows of T (what: "app", …) in a
// transaction, once before, given the row, has checked or cleared what
// depends on it.
func deleteOrgRow[T any](db *gorm.DB, what, orgID, id string, before func(tx *gorm.DB, row T) error) error {
	return db.Transaction(func(tx *gorm.DB) error {
		row, err := first[T](tx, what+" "+id, "org_id = ? AND id = ?", orgID, id)
		if err != nil {
			return err
		}
		if err := before(tx, row); err != nil {
			return err
		}
		return tx.Delete(&row).Error
	})
}

// newestOfInstall lists up to limit of an install's rows of T (jobs,
// operations, commands), newest first.
func newestOfInstall[T any](db *gorm.DB, orgID, installID string, limit int) ([]T, error) {
	return list[T](db.Limit(limit), "created_at DESC, id DESC", "org_id = ? AND install_id = ?", orgID, installID)
}
