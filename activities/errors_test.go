package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store/storetest"
)

// A row that is not there fails an activity for good; the database being
// away (stopped, restarting) is retried, and once it is back the activity
// succeeds, on the store it had.
func TestStoreErrorsAreClassified(t *testing.T) {
	pg := storetest.StartServer(t)
	s := storetest.OpenPostgres(t, pg.AdminURL())
	inst := storetest.NewTenant(t, s).Install
	ctx := context.Background()
	a := &activities.Activities{Store: s}
	job := contract.EnqueueJobInput{Key: "k1", InstallID: inst.ID, Type: protocol.JobTypeNoop, Manifest: json.RawMessage(`{}`)}

	missing := job
	missing.InstallID = "ins_none"
	_, err := a.EnqueueJob(ctx, missing)
	if got := class(err); got != "non-retryable NotFound" {
		t.Errorf("a missing install: %s (%v), want non-retryable NotFound", got, err)
	}

	pg.Stop()
	_, err = a.EnqueueJob(ctx, job)
	if got := class(err); got != "retryable" {
		t.Errorf("the database stopped: %s (%v), want retryable", got, err)
	}

	pg.Start()
	// Connections the stop cut may fail a first call or two (retryable, as
	// Temporal would retry them); the activity succeeds soon after.
	var ref contract.JobRef
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ref, err = a.EnqueueJob(ctx, job)
		if err == nil || time.Now().After(deadline) {
			break
		}
		if got := class(err); got != "retryable" {
			t.Fatalf("the database back, a cut connection: %s (%v), want retryable", got, err)
		}
	}
	if err != nil || !ref.Created {
		t.Fatalf("the database back: %+v, %v; want a new job", ref, err)
	}
	again, err := a.EnqueueJob(ctx, job)
	if err != nil || again.Created || again.JobID != ref.JobID {
		t.Errorf("enqueue again: %+v, %v; want the same job %s", again, err, ref.JobID)
	}
}

// class is how Temporal sees an activity's error: it looks at the error's
// own type only.
func class(err error) string {
	if err == nil {
		return "nil"
	}
	if app, ok := err.(*temporal.ApplicationError); ok && app.NonRetryable() {
		return "non-retryable " + app.Type()
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.NonRetryable() {
		return fmt.Sprintf("retryable (a wrapped non-retryable %s)", app.Type())
	}
	return "retryable"
}
