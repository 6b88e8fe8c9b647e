package storetest

import (
	"errors"

	"gorm.io/gorm"
)

// OnEveryStatement registers fn, as name, to run before (or, with after,
// after) each statement gorm sends through db: creates, queries, updates,
// deletes, rows and raw SQL alike.
func OnEveryStatement(db *gorm.DB, name string, after bool, fn func(*gorm.DB)) error {
	cb := db.Callback()
	reg := func(before, afterIt func(string) registrar, op string) error {
		at := before
		if after {
			at = afterIt
		}
		return at("gorm:"+op).Register(name, fn)
	}
	c, q, u, d, row, raw := cb.Create(), cb.Query(), cb.Update(), cb.Delete(), cb.Row(), cb.Raw()
	return errors.Join(
		reg(wrap(c.Before), wrap(c.After), "create"), reg(wrap(q.Before), wrap(q.After), "query"),
		reg(wrap(u.Before), wrap(u.After), "update"), reg(wrap(d.Before), wrap(d.After), "delete"),
		reg(wrap(row.Before), wrap(row.After), "row"), reg(wrap(raw.Before), wrap(raw.After), "raw"),
	)
}

// registrar is a gorm callback about to be registered.
type registrar interface {
	Register(name string, fn func(*gorm.DB)) error
}

// wrap turns a processor's Before or After (whose callback type gorm does
// not export) into one answering a registrar.
func wrap[C registrar](at func(string) C) func(string) registrar {
	return func(name string) registrar { return at(name) }
}
