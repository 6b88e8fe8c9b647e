package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/outpost-dev/outpost/store/seal"
)

// plainColumn is a sealed column whose older rows (written before it was
// sealed: migration 16, or 24 for configs and commands) may still hold
// plaintext.
type plainColumn struct {
	table, column string
	keys          []string // the row's key columns, in its place's order
	scopeColumn   string   // the column holding the scope (install_id or org_id)
	orgColumn     string   // the fallback scope when scopeColumn is NULL
	where         string   // which rows are sealed at all
}

var plainColumns = []plainColumn{
	{"jobs", "manifest", []string{"id"}, "install_id", "org_id", ""},
	{"jobs", "outputs", []string{"id"}, "install_id", "org_id", ""},
	{"jobs", "inputs", []string{"id"}, "install_id", "org_id", ""},
	{"install_inputs", "value", []string{"install_id", "name"}, "install_id", "install_id", "sensitive"},
	{"install_outputs", "outputs", []string{"install_id", "name"}, "install_id", "install_id", ""},
	{"terraform_state_versions", "state", []string{"org_id", "workspace", "version"}, "org_id", "org_id", ""},
	{"app_configs", "content", []string{"id"}, "org_id", "org_id", ""},
	{"install_commands", "output", []string{"id"}, "install_id", "install_id", ""},
	{"install_commands", "error", []string{"id"}, "install_id", "install_id", ""},
}

// SealPlaintext seals the values written before sealing (Migrate runs it).
// Readers return plaintext as it is meanwhile; each row is sealed by one
// update that holds only if the value is still the one read, so concurrent
// writers and a second process doing the same never lose a value.
func (s *Store) SealPlaintext(ctx context.Context) (int, error) {
	n := 0
	for _, c := range plainColumns {
		for {
			done, err := s.sealBatch(ctx, c)
			n += done
			if err != nil {
				return n, fmt.Errorf("seal %s.%s: %w", c.table, c.column, err)
			}
			if done == 0 {
				break
			}
		}
	}
	return n, nil
}

// sealBatch seals up to 100 plaintext values of the column; 0 when none is
// left (or none of those read could be sealed: they changed meanwhile and
// the next run sees them).
func (s *Store) sealBatch(ctx context.Context, c plainColumn) (int, error) {
	db := s.db.WithContext(ctx)
	cond := c.column + " IS NOT NULL AND " + c.column + " <> '' AND " + c.column + " NOT LIKE ?"
	if c.where != "" {
		cond += " AND " + c.where
	}
	cols := append(append([]string{}, c.keys...), c.column, c.scopeColumn+" AS scope", c.orgColumn+" AS org")
	var rows []map[string]any
	if err := db.Table(c.table).Select(cols).Where(cond, seal.Prefix+"%").Order(strings.Join(c.keys, ", ")).
		Limit(100).Find(&rows).Error; err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		scope, org := text(r["scope"]), text(r["org"])
		if scope == "" {
			scope = org
		}
		ids := make([]string, len(c.keys))
		where := db.Table(c.table).Where(c.column+" = ?", text(r[c.column]))
		for i, k := range c.keys {
			ids[i] = text(r[k])
			where = where.Where(k+" = ?", r[k])
		}
		sealed, err := sealValue(db, scope, c.table+"."+c.column+"/"+strings.Join(ids, "/"), text(r[c.column]))
		if err != nil {
			return n, err
		}
		res := where.Update(c.column, sealed)
		if res.Error != nil {
			return n, res.Error
		}
		n += int(res.RowsAffected)
	}
	return n, nil
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}
