package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store/storetest"
)

// No install is left locked (docs/architecture/operations.md, "The install's
// lock"): whatever ends an operation's workflow, the operation is finished
// and the install takes the next one.

// An operation whose BeginOperation fails for good (a component the config
// does not have: a non-retryable error) is finished, failed, saying why,
// by its workflow; the install takes the next operation.
func TestBeginOperationFailureFreesTheInstall(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig("testdata/release-app")
	inst, _ := s.newInstall("cust-lock")
	op := s.startOp(inst, "/components/nope/deploy", nil)
	s.waitWorkflowClosed(op.WorkflowID, time.Minute)
	s.replay(op.WorkflowID)
	// Finished by the workflow itself, not later by the sweeper.
	done := s.getOp(inst, op.ID, 0)
	if done.FinishedAt == nil || done.Status != status.OpFailed || !strings.Contains(done.Error, `has no component "nope"`) {
		t.Fatalf("operation once its workflow closed: %s %q (finished %v); want failed, naming the missing component",
			done.Status, done.Error, done.FinishedAt)
	}
	s.checkTakesNextOperation(inst)
}

// The database away longer than the local activity's limit while an
// operation begins: once it is back, the operation is finished, failed,
// and the install takes the next operation.
func TestDatabaseDownWhileBeginningFreesTheInstall(t *testing.T) {
	pg := storetest.StartServer(t)
	s := newStack(t, stackOptions{postgres: pg.AdminURL()})
	s.syncConfig("testdata/release-app")
	inst, _ := s.newInstall("cust-lock-db")
	s.waitRunnerOnline(inst)
	s.waitBuildsEnded() // builds are not what this test takes the database from
	// The operation's workflow starts only once the database is down.
	s.worker.Stop()
	op := s.startOp(inst, "/provision", nil)
	pg.Stop()
	s.startWorker()
	time.Sleep(75 * time.Second) // BeginOperation's attempts end after a minute
	pg.Start()
	s.waitWorkflowClosed(op.WorkflowID, 3*time.Minute)
	s.replay(op.WorkflowID)
	// Finished by the workflow, or, when its own FinishOperation could not
	// reach the database either, by the worker's sweeper.
	var done operation
	waitFor(t, time.Minute, "the operation to be finished", func() bool {
		return s.do("GET", "/v1/installs/"+inst+"/operations/"+op.ID, nil, &done) == http.StatusOK && done.FinishedAt != nil
	})
	if done.Status != status.OpFailed || !strings.Contains(done.Error, "beginning the operation") && !strings.Contains(done.Error, "without finishing it") {
		t.Fatalf("operation once its workflow closed: %s %q; want failed while beginning, or swept", done.Status, done.Error)
	}
	t.Logf("finished: %s %q", done.Status, done.Error)
	s.checkTakesNextOperation(inst)
}

// An operation whose workflow is terminated (by hand, in Temporal's UI) is
// finished by the worker's sweeper: failed, saying so; the install takes
// the next operation.
func TestSweeperFinishesAnOperationWhoseWorkflowClosed(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig("testdata/release-app")
	inst, _ := s.newInstall("cust-sweep")
	s.worker.Stop()
	op := s.startOp(inst, "/provision", nil)
	if err := s.client.TerminateWorkflow(context.Background(), op.WorkflowID, "", "by hand"); err != nil {
		t.Fatal(err)
	}
	s.startWorker()
	done := s.waitOp(inst, op.ID, time.Minute)
	if done.Status != status.OpFailed || !strings.Contains(done.Error, "ended (terminated) without finishing it") {
		t.Fatalf("operation after its workflow was terminated: %s %q; want failed, saying so", done.Status, done.Error)
	}
	var e struct{ Message string }
	if code := s.do("POST", "/v1/installs/"+inst+"/operations/"+op.ID+"/cancel", nil, &e); code != http.StatusConflict {
		t.Fatalf("cancelling the swept operation: %d %q, want 409 (it has finished)", code, e.Message)
	}
	s.checkTakesNextOperation(inst)
}

// checkTakesNextOperation checks the install is free: a provision is
// accepted and succeeds.
func (s *stack) checkTakesNextOperation(inst string) {
	s.t.Helper()
	var next operation
	if code := s.do("POST", "/v1/installs/"+inst+"/provision", nil, &next); code != http.StatusAccepted {
		s.t.Fatalf("the next operation: %d, want 202 (the install still locked?)", code)
	}
	if op := s.waitOp(inst, next.ID, 5*time.Minute); op.Status != status.OpSucceeded {
		s.t.Fatalf("the next operation: %s %q %+v", op.Status, op.Error, op.Steps)
	}
}

// waitWorkflowClosed waits until the latest run of a workflow has closed.
func (s *stack) waitWorkflowClosed(workflowID string, within time.Duration) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	_ = s.client.GetWorkflow(ctx, workflowID, "").Get(ctx, nil) // how it ended is in the store
	if ctx.Err() != nil {
		s.t.Fatalf("workflow %s still running after %s", workflowID, within)
	}
}

// waitBuildsEnded waits until every build of the stack's app has succeeded.
func (s *stack) waitBuildsEnded() {
	s.t.Helper()
	waitFor(s.t, 5*time.Minute, "the app's builds to succeed", func() bool {
		var list struct{ Builds []struct{ Status string } }
		if s.do("GET", "/v1/apps/"+s.install.AppID+"/builds", nil, &list) != http.StatusOK || len(list.Builds) == 0 {
			return false
		}
		for _, b := range list.Builds {
			if b.Status != string(status.BuildSucceeded) {
				return false
			}
		}
		return true
	})
}
