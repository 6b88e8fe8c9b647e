package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/store"
)

// A runner's online_since holds through calls closer than the online
// window, and starts again at the first call after a longer gap.
func TestRunnerOnlineSince(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		since := func() time.Time {
			t.Helper()
			r, err := f.s.GetRunner(ctx, f.org.ID, f.runner.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.OnlineSince == nil {
				t.Fatal("online_since is null after the runner was seen")
			}
			return r.OnlineSince.UTC()
		}
		touch := func(at time.Time) {
			t.Helper()
			if err := f.s.TouchRunners(ctx, []string{f.runner.ID}, at); err != nil {
				t.Fatal(err)
			}
		}
		t0 := time.Now().UTC().Truncate(time.Millisecond).Add(-2 * time.Minute)
		touch(t0)
		touch(t0.Add(30 * time.Second))
		touch(t0.Add(80 * time.Second))
		if got := since(); !got.Equal(t0) {
			t.Fatalf("online since %s after calls 30s and 50s apart, want %s", got, t0)
		}
		back := t0.Add(80*time.Second + store.DefaultOnlineWindow + time.Second)
		touch(back)
		if got := since(); !got.Equal(back) {
			t.Fatalf("online since %s after a gap longer than the window, want %s", got, back)
		}
		if err := f.s.UpdateRunnerInfo(ctx, f.runner.ID, store.RunnerInfo{Version: "v2"}); err != nil {
			t.Fatal(err)
		}
		if got := since(); !got.Equal(back) {
			t.Fatalf("online since %s after a heartbeat within the window, want %s", got, back)
		}
	})
}
