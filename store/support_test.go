package store_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// A support bundle's archive is taken only from the running attempt of its job and only under the cap;
// an expired bundle is gone for readers at once, and the sweep deletes it with its archive.
func TestSupportBundleCapAndRetention(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		bundle := func(expires time.Time) store.SupportBundle {
			b, err := f.s.CreateSupportBundle(ctx, store.SupportBundle{OrgID: f.org.ID, InstallID: f.inst.ID, WorkflowID: "wf", ExpiresAt: expires})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		fresh, old := bundle(time.Time{}), bundle(time.Now().Add(time.Hour))
		if d := time.Until(fresh.ExpiresAt); d < store.DefaultSupportBundleRetention-time.Minute {
			t.Fatalf("a new bundle expires in %s, want the default retention", d)
		}
		for i, b := range []store.SupportBundle{fresh, old} {
			j := f.enqueue(t, "support/"+b.ID)
			b.JobID = &j.ID
			if err := f.s.UpdateSupportBundle(ctx, b); err != nil {
				t.Fatal(err)
			}
			data := bytes.Repeat([]byte{byte('a' + i)}, 1000)
			if err := f.s.PutSupportBundleArchive(ctx, f.runner.ID, j.ID, 1, data, 1<<20); !errors.Is(err, store.ErrStaleAttempt) {
				t.Fatalf("upload before the job runs: %v, want a stale attempt", err)
			}
			if c, err := f.s.ClaimJob(ctx, f.runner.ID, time.Minute, store.Claimant{}); err != nil || c == nil || c.ID != j.ID {
				t.Fatalf("claim: %+v %v", c, err)
			}
			err := f.s.PutSupportBundleArchive(ctx, f.runner.ID, j.ID, 1, data, 999)
			var fe *store.FieldError
			if !errors.As(err, &fe) || fe.Field != "bundle" || !strings.Contains(fe.Message, "1000 bytes, over the cap of 999 bytes") {
				t.Fatalf("upload over the cap: %v", err)
			}
			if err := f.s.PutSupportBundleArchive(ctx, f.runner.ID, j.ID, 1, data, 1000); err != nil {
				t.Fatalf("upload at the cap: %v", err)
			}
			got, archive, err := f.s.SupportBundleData(ctx, f.org.ID, b.ID)
			if err != nil || !bytes.Equal(archive, data) || got.SizeBytes != 1000 || len(got.SHA256) != 64 {
				t.Fatalf("read back: %+v, %d bytes, %v", got, len(archive), err)
			}
		}
		// The second bundle expires: it is at once out of the API's reach, then swept.
		if err := f.s.DB().Model(&store.SupportBundle{}).Where("id = ?", old.ID).
			Update("expires_at", time.Now().Add(-time.Second)).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.GetSupportBundle(ctx, f.org.ID, old.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an expired bundle read: %v, want not found", err)
		}
		if list, err := f.s.ListSupportBundles(ctx, f.org.ID, f.inst.ID, 10); err != nil || len(list) != 1 || list[0].ID != fresh.ID {
			t.Fatalf("list after expiry: %+v %v, want only %s", list, err, fresh.ID)
		}
		if n, err := f.s.SweepSupportBundles(ctx); err != nil || n != 1 {
			t.Fatalf("sweep: %d, %v; want 1", n, err)
		}
		var archives int64
		if err := f.s.DB().Model(&store.SupportBundleArchive{}).Count(&archives).Error; err != nil || archives != 1 {
			t.Fatalf("archives after the sweep: %d, %v; want the fresh bundle's only", archives, err)
		}
		if _, _, err := f.s.SupportBundleData(ctx, f.org.ID, fresh.ID); err != nil {
			t.Fatalf("the fresh bundle after the sweep: %v", err)
		}
	})
}

// An install keeps at most MaxSupportBundlesPerInstall bundles: one more is refused, naming when the
// oldest expires, until one is deleted; one still being collected cannot be deleted.
func TestSupportBundlesPerInstallAndDelete(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		var held []store.SupportBundle
		for range store.MaxSupportBundlesPerInstall {
			b, err := f.s.CreateSupportBundle(ctx, store.SupportBundle{OrgID: f.org.ID, InstallID: f.inst.ID, WorkflowID: "wf"})
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, b)
		}
		_, err := f.s.CreateSupportBundle(ctx, store.SupportBundle{OrgID: f.org.ID, InstallID: f.inst.ID, WorkflowID: "wf"})
		if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "holds 10 support bundles") || !strings.Contains(err.Error(), "expires at") {
			t.Fatalf("one bundle over the limit: %v, want a conflict naming the limit and the oldest's expiry", err)
		}
		if err := f.s.DeleteSupportBundle(ctx, f.org.ID, f.inst.ID, held[0].ID); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("deleting a bundle being collected: %v, want a conflict", err)
		}
		done := held[0]
		done.Status = status.JobSucceeded
		if err := f.s.UpdateSupportBundle(ctx, done); err != nil {
			t.Fatal(err)
		}
		if err := f.s.DeleteSupportBundle(ctx, "org_other", f.inst.ID, done.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleting another org's bundle: %v, want not found", err)
		}
		if err := f.s.DeleteSupportBundle(ctx, f.org.ID, f.inst.ID, done.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.GetSupportBundle(ctx, f.org.ID, done.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a deleted bundle reads %v, want not found", err)
		}
		if _, err := f.s.CreateSupportBundle(ctx, store.SupportBundle{OrgID: f.org.ID, InstallID: f.inst.ID, WorkflowID: "wf"}); err != nil {
			t.Fatalf("a bundle after one was deleted: %v", err)
		}
	})
}

// Bundles asked for at once cannot pass the limit together: the count and the insert are one step.
func TestSupportBundlesAskedForAtOnceKeepTheLimit(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		const asked = store.MaxSupportBundlesPerInstall + 4
		errs := make(chan error, asked)
		for range asked {
			go func() {
				_, err := f.s.CreateSupportBundle(ctx, store.SupportBundle{OrgID: f.org.ID, InstallID: f.inst.ID, WorkflowID: "wf"})
				errs <- err
			}()
		}
		created, refused := 0, 0
		for range asked {
			switch err := <-errs; {
			case err == nil:
				created++
			case errors.Is(err, store.ErrConflict):
				refused++
			default:
				t.Fatal(err)
			}
		}
		if created != store.MaxSupportBundlesPerInstall || refused != asked-created {
			t.Fatalf("%d bundles asked for at once: %d created, %d refused; want %d created", asked, created, refused, store.MaxSupportBundlesPerInstall)
		}
	})
}
