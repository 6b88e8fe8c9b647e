package store_test

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/store"
)

// An org's audit events list newest first, page by page through before
// (events recorded at the same instant included), filtered by token, action,
// object or time, and never another org's.
func TestAuditEvents(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		other, _, err := f.s.CreateOrg(ctx, "globex")
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		record := func(org string, at time.Time, tok, action string, objects map[string]string) string {
			t.Helper()
			ev, err := f.s.RecordAuditEvent(ctx, store.AuditEvent{OrgID: org, CreatedAt: at, TokenID: tok, TokenName: "admin",
				Via: store.ViaBearer, Method: "POST", Route: "/v1/x", Action: action, Objects: objects, Status: 201})
			if err != nil {
				t.Fatal(err)
			}
			return ev.ID
		}
		type rec struct {
			at time.Time
			id string
		}
		var recs []rec
		for i := range 5 {
			at := t0.Add(time.Duration(i/2) * time.Second) // pairs share an instant: their IDs order them
			recs = append(recs, rec{at, record(f.org.ID, at, "tok_a", "createApp", map[string]string{"app_id": "app_1"})})
		}
		slices.SortFunc(recs, func(a, b rec) int { return cmp.Or(b.at.Compare(a.at), cmp.Compare(b.id, a.id)) })
		want := []string{record(f.org.ID, t0.Add(time.Minute), "tok_b", "approveStep",
			map[string]string{"install_id": "ins_1", "operation_id": "op_1", "step": "sandbox"})} // newest first
		for _, r := range recs {
			want = append(want, r.id)
		}
		want = append(want, record(f.org.ID, t0.Add(-time.Hour), "tok_a", "deleteApp", map[string]string{"app_id": "appX1"}))
		record(other.ID, t0.Add(time.Hour), "tok_c", "createApp", map[string]string{"app_id": "app_1"})

		list := func(flt store.AuditFilter) []string {
			t.Helper()
			evs, err := f.s.ListAuditEvents(ctx, f.org.ID, flt)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, ev := range evs {
				ids = append(ids, ev.ID)
			}
			return ids
		}
		var paged []string
		for page, before := 0, ""; page < 10; page++ {
			got := list(store.AuditFilter{Limit: 2, Before: before})
			if len(got) == 0 {
				break
			}
			paged, before = append(paged, got...), got[len(got)-1]
		}
		if !slices.Equal(paged, want) {
			t.Errorf("pages of 2 = %v, want %v", paged, want)
		}
		for _, tc := range []struct {
			f    store.AuditFilter
			want []string
		}{
			{store.AuditFilter{TokenID: "tok_b"}, want[:1]},
			{store.AuditFilter{Action: "createApp"}, want[1:6]},
			{store.AuditFilter{ObjectID: "op_1"}, want[:1]},
			{store.AuditFilter{ObjectID: "app_1"}, want[1:6]}, // _ matches itself only, not appX1
			{store.AuditFilter{ObjectID: "op%1"}, nil},        // nor is % a wildcard
			{store.AuditFilter{ObjectID: "step"}, nil},        // keys are not objects
			{store.AuditFilter{ObjectID: "app"}, nil},         // nor parts of IDs
			{store.AuditFilter{Since: t0.Add(time.Second)}, want[:4]},
			{store.AuditFilter{Action: "createApp", Before: want[2]}, want[3:6]},
		} {
			if got := list(tc.f); !slices.Equal(got, tc.want) {
				t.Errorf("%+v = %v, want %v", tc.f, got, tc.want)
			}
		}
		otherEvents, err := f.s.ListAuditEvents(ctx, other.ID, store.AuditFilter{})
		if err != nil || len(otherEvents) != 1 || otherEvents[0].TokenID != "tok_c" {
			t.Errorf("the other org's events = %+v, %v", otherEvents, err)
		}
		_, err = f.s.ListAuditEvents(ctx, other.ID, store.AuditFilter{Before: want[0]})
		if fe := (*store.FieldError)(nil); !errors.As(err, &fe) || fe.Field != "before" {
			t.Errorf("another org's event as the cursor: %v, want a FieldError on before", err)
		}
	})
}
