package storetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/seal"
)

// DefaultAdminURL is the PostgreSQL server tests use unless
// OUTPOST_TEST_DATABASE_URL says otherwise.
const DefaultAdminURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Dialects lists the dialects store tests run on.
var Dialects = []string{store.Postgres, store.SQLite}

// Open returns a migrated store on a fresh database of the given dialect.
func Open(t testing.TB, dialect string) *store.Store {
	t.Helper()
	return OpenConfig(t, NewConfig(t, dialect))
}

// OpenPostgres returns a migrated store on a fresh database of the
// PostgreSQL server at adminURL (a Server's, say).
func OpenPostgres(t testing.TB, adminURL string) *store.Store {
	t.Helper()
	return OpenConfig(t, store.Config{DatabaseURL: newDatabase(t, adminURL), Keys: NewKeyring(t)})
}

// OpenConfig opens and migrates a store of the configuration (NewConfig's,
// say), closed when the test ends.
func OpenConfig(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}

// NewConfig returns the configuration of a fresh, empty database of the
// given dialect, dropped or removed when the test ends.
func NewConfig(t testing.TB, dialect string) store.Config {
	t.Helper()
	switch dialect {
	case store.Postgres:
		return store.Config{DatabaseURL: NewPostgresDatabase(t), Keys: NewKeyring(t)}
	case store.SQLite:
		return store.Config{SQLitePath: filepath.Join(t.TempDir(), "outpost.db"), Keys: NewKeyring(t)}
	}
	t.Fatalf("unknown dialect %q", dialect)
	return store.Config{}
}

// NewKeyring returns a keyring of a fresh random key-encryption key.
func NewKeyring(t testing.TB) *seal.Keyring {
	t.Helper()
	k, err := seal.ParseLocalKey(seal.GenerateKeyText())
	if err != nil {
		t.Fatal(err)
	}
	ring, err := seal.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

// NewPostgresDatabase creates an empty database and returns its URL; it is
// dropped when the test ends.
func NewPostgresDatabase(t testing.TB) string {
	t.Helper()
	admin := os.Getenv("OUTPOST_TEST_DATABASE_URL")
	if admin == "" {
		admin = DefaultAdminURL
	}
	return newDatabase(t, admin)
}

func newDatabase(t testing.TB, admin string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to PostgreSQL at %s (set OUTPOST_TEST_DATABASE_URL): %v", admin, err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("outpost_t_%s", strings.ToLower(store.NewID("db")[3:]))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("parse %s: %v", admin, err)
	}
	u.Path = "/" + name
	return u.String()
}

// Tenant is an org with an app and one install of it.
type Tenant struct {
	Org      store.Org
	OrgToken string // the org's API token (its admin's)
	// AdminPassword signs the org's admin (store.LocalAdminName) in.
	AdminPassword string
	App           store.App
	Install       store.Install
	Runner        store.Runner // the install's runner
	// RegistrationToken registers the install's runner.
	RegistrationToken string
}

// PostgresTenant opens a PostgreSQL store (Open) with a new tenant in it
// (NewTenant).
func PostgresTenant(t testing.TB) (*store.Store, Tenant) {
	t.Helper()
	s := Open(t, store.Postgres)
	return s, NewTenant(t, s)
}

// NewTenant creates an org "acme", its app "demo" and an install of it,
// "customer-1", with the given inputs.
func NewTenant(t testing.TB, s *store.Store, inputs ...store.InstallInput) Tenant {
	t.Helper()
	ctx := context.Background()
	var (
		tn  Tenant
		err error
	)
	org, err := s.CreateOrgWithAdmin(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	tn.Org, tn.OrgToken, tn.AdminPassword = org.Org, org.Token, org.Password
	if tn.App, err = s.CreateApp(ctx, tn.Org.ID, "demo", ""); err != nil {
		t.Fatal(err)
	}
	if tn.Install, tn.Runner, tn.RegistrationToken, err = s.CreateInstall(ctx, tn.Org.ID, tn.App.ID, "customer-1", inputs); err != nil {
		t.Fatal(err)
	}
	return tn
}

// NewOrgApp creates the org name, without users (it returns the org's API
// token), and its app "demo".
func NewOrgApp(t testing.TB, s *store.Store, name string) (store.Org, string, store.App) {
	t.Helper()
	ctx := context.Background()
	org, token, err := s.CreateOrg(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	app, err := s.CreateApp(ctx, org.ID, "demo", "")
	if err != nil {
		t.Fatal(err)
	}
	return org, token, app
}

// DatabaseBytes is everything s's database holds, as someone with a copy of
// it would see it: a pg_dump of a PostgreSQL database (of the server
// OUTPOST_TEST_DATABASE_URL names), the SQLite file with its write-ahead log.
func DatabaseBytes(t testing.TB, s *store.Store) []byte {
	t.Helper()
	if s.Dialect() == store.Postgres {
		var name string
		if err := s.DB().Raw("SELECT current_database()").Scan(&name).Error; err != nil {
			t.Fatal(err)
		}
		admin := os.Getenv("OUTPOST_TEST_DATABASE_URL")
		if admin == "" {
			admin = DefaultAdminURL
		}
		u, err := url.Parse(admin)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + name
		out, err := exec.Command("pg_dump", "--no-owner", u.String()).Output()
		if err != nil {
			t.Fatalf("pg_dump (postgresql-client) of %s: %v", name, err)
		}
		return out
	}
	var file string
	if err := s.DB().Raw("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file).Error; err != nil || file == "" {
		t.Fatalf("the SQLite file: %q, %v", file, err)
	}
	var all []byte
	for _, f := range []string{file, file + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}
