package store_test

import (
	"database/sql"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

var update = flag.Bool("update", false, "rewrite testdata/schema-<dialect>.txt from a freshly migrated database")

// catalogQueries describe a schema from each dialect's catalog, one row per table, column, index
// or constraint (the first field says which); columns by name, not position (see docs/architecture/store.md, "Migrations").
var catalogQueries = map[string][]string{
	store.Postgres: {
		`SELECT 'table', table_name, table_type FROM information_schema.tables WHERE table_schema = 'public'`,
		`SELECT 'column', table_name || '.' || column_name, data_type, character_maximum_length, is_nullable,
			column_default FROM information_schema.columns WHERE table_schema = 'public'`,
		`SELECT 'index', tablename || '.' || indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'`,
		`SELECT 'constraint', conrelid::regclass::text || '.' || conname, contype, pg_get_constraintdef(oid)
			FROM pg_constraint WHERE connamespace = 'public'::regnamespace`,
		`SELECT 'sequence', sequence_name, data_type FROM information_schema.sequences WHERE sequence_schema = 'public'`,
	},
	store.SQLite: {
		`SELECT 'table', name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'`,
		`SELECT 'column', m.name || '.' || p.name, p.type, p."notnull", p.dflt_value, p.pk
			FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite%'`,
		`SELECT 'index', m.name || '.' || l.name, l."unique", l.origin, l.partial,
			(SELECT group_concat(name) FROM (SELECT name FROM pragma_index_info(l.name) ORDER BY seqno))
			FROM sqlite_master m, pragma_index_list(m.name) l WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite%'`,
		`SELECT 'index sql', tbl_name || '.' || name, sql FROM sqlite_master WHERE type = 'index'`,
		`SELECT 'foreign key', m.name || '.' || f."from", f."table", f."to", f.on_update, f.on_delete, f."match"
			FROM sqlite_master m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite%'`,
	},
}

// dumpSchema is the store's schema as its catalog describes it, sorted.
func dumpSchema(t *testing.T, s *store.Store) []string {
	t.Helper()
	var out []string
	for _, q := range catalogQueries[s.Dialect()] {
		rows, err := s.DB().Raw(q).Rows()
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, scanLines(t, rows)...)
	}
	slices.Sort(out)
	return out
}

// scanLines turns each row into its fields joined by " | ", NULL as NULL.
func scanLines(t *testing.T, rows *sql.Rows) []string {
	t.Helper()
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fields := make([]string, len(vals))
		for i, v := range vals {
			fields[i] = "NULL"
			if v.Valid {
				fields[i] = strings.Join(strings.Fields(v.String), " ")
			}
		}
		lines = append(lines, strings.Join(fields, " | "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// diffLines lists the lines only in want (-) and only in got (+).
func diffLines(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// goldenSchema is testdata/schema-<dialect>.txt.
func goldenSchema(t *testing.T, dialect string) []string {
	t.Helper()
	b, err := os.ReadFile(goldenPath(dialect))
	if err != nil {
		t.Fatalf("%v (run go test ./store -run TestSchemaOfFreshDatabase -update)", err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func goldenPath(dialect string) string { return filepath.Join("testdata", "schema-"+dialect+".txt") }

// TestSchemaOfFreshDatabase compares a freshly migrated database with the
// committed schema, which was first written from the code whose migration 1
// built its tables from the live models (so existing databases have it).
// A new migration changes it: rerun with -update and review the diff.
func TestSchemaOfFreshDatabase(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		got := dumpSchema(t, storetest.Open(t, d))
		if *update {
			if err := os.WriteFile(goldenPath(d), []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if diff := diffLines(goldenSchema(t, d), got); diff != "" {
			t.Fatalf("schema differs from testdata/schema-%s.txt:\n%s", d, diff)
		}
	})
}
