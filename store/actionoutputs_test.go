package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// finishRun runs each of run's steps with outputs (sealed: the sensitive
// ones), then ends the run with st.
func finishRun(t *testing.T, ctx context.Context, f sealedFixture, run store.ActionRun, st status.Job, outs, sealed []map[string]string) {
	t.Helper()
	for i := range outs {
		if err := f.s.StartActionRunStep(ctx, run.ID, i, "job_"+run.ID); err != nil {
			t.Fatal(err)
		}
		err := f.s.FinishActionRunStep(ctx, store.ActionRunStep{RunID: run.ID, StepIndex: i, Status: status.JobSucceeded,
			Outputs: outs[i], SensitiveOutputs: sealed[i]})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.s.FinishActionRun(ctx, run.ID, st, ""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // runs finish in order
}

// The latest succeeded run's outputs, its steps' merged in order (a later
// step's key wins, plain or sealed); a later failed run changes nothing, a
// run still going neither; an action never succeeded is left out.
func TestLatestActionOutputs(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		ctx, f := context.Background(), newSealedFixture(t, d)
		finishRun(t, ctx, f, newRun(t, ctx, f), status.JobSucceeded,
			[]map[string]string{{"version": "1"}, {}}, []map[string]string{nil, nil})
		latest := newRun(t, ctx, f)
		finishRun(t, ctx, f, latest, status.JobSucceeded,
			[]map[string]string{{"version": "2", "token": "plain-then-sealed"}, {"version": "3", "host": "db"}},
			[]map[string]string{{"host": "sealed-then-plain"}, {"token": secretRunOutput}})
		failed := newRun(t, ctx, f)
		finishRun(t, ctx, f, failed, status.JobFailed, []map[string]string{{"version": "9"}}, []map[string]string{nil})
		newRun(t, ctx, f) // queued

		got, err := f.s.LatestActionOutputs(ctx, f.inst.ID, []string{"migrate", "backup"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]store.ActionOutputs{"migrate": {RunID: latest.ID,
			Outputs:          map[string]string{"version": "3", "host": "db"},
			SensitiveOutputs: map[string]string{"token": secretRunOutput}}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("latest outputs %+v, want %+v", got, want)
		}
	})
}
