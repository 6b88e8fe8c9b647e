package store_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// openLogged opens a migrated store of dialect whose statement log goes to
// the returned buffer.
func openLogged(t testing.TB, dialect string) (*store.Store, *testutil.LockedBuffer) {
	t.Helper()
	logs := &testutil.LockedBuffer{}
	cfg := storetest.NewConfig(t, dialect)
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	return storetest.OpenConfig(t, cfg), logs
}

// The statement log holds the statements that failed for a fault, and the
// slow ones, with placeholders instead of values; the statements that
// succeed, and the failures that are answers (not found, a duplicate), are
// not logged.
func TestStatementLog(t *testing.T) {
	forEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		s, logs := openLogged(t, dialect)
		org, _, err := s.CreateOrg(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.CreateOrg(ctx, "acme"); err == nil {
			t.Fatal("a second org of the same name was created")
		}
		if _, err := s.GetJobByID(ctx, "job_none"); err == nil {
			t.Fatal("a job that does not exist was found")
		}
		if _, err := s.CreateApp(ctx, org.ID, "demo", ""); err != nil {
			t.Fatal(err)
		}
		if got := logs.String(); got != "" {
			t.Fatalf("statements that succeeded, or failed as answers, were logged:\n%s", got)
		}

		err = s.DB().WithContext(ctx).Exec("UPDATE no_such_table SET secret = ?", "hunter2-value").Error
		if err == nil {
			t.Fatal("an update of a table that does not exist succeeded")
		}
		got := logs.String()
		if !strings.Contains(got, "SQL executed") || !strings.Contains(got, "no_such_table") {
			t.Errorf("the failed statement was not logged:\n%s", got)
		}
		if strings.Contains(got, "hunter2-value") {
			t.Errorf("the log shows a statement's value:\n%s", got)
		}

		if dialect == store.Postgres {
			if err := s.DB().WithContext(ctx).Exec("SELECT pg_sleep(1.1)").Error; err != nil {
				t.Fatal(err)
			}
			if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "pg_sleep") {
				t.Errorf("the slow statement was not logged:\n%s", got)
			}
		}
	})
}

// BenchmarkEnqueueJob queues jobs whose manifest is 64 KiB (a module
// archive travels in a manifest): statements that gorm's logger would
// render, values and all, before deciding not to log them.
//
//	go test ./store -run '^$' -bench BenchmarkEnqueueJob -benchmem
func BenchmarkEnqueueJob(b *testing.B) {
	s, _ := openLogged(b, store.Postgres)
	ctx := context.Background()
	tn := storetest.NewTenant(b, s)
	org, r := tn.Org, tn.Runner
	manifest := []byte(`{"module":"` + strings.Repeat("QUJD", 16<<10) + `"}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		spec := store.JobSpec{Key: "k" + strconv.Itoa(i), OrgID: org.ID, RunnerID: r.ID, Type: "noop", Manifest: manifest}
		if _, _, err := s.EnqueueJob(ctx, spec); err != nil {
			b.Fatal(err)
		}
	}
}
