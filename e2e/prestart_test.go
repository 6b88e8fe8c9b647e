package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// installJob is the API's view of a job in an install's job list.
type installJob struct {
	ID             string     `json:"id"`
	Type           string     `json:"type"`
	Status         status.Job `json:"status"`
	InputsDeferred bool       `json:"inputs_deferred"`
	InputsAt       *time.Time `json:"inputs_at"`
	StartedAt      *time.Time `json:"started_at"`
	FinishedAt     *time.Time `json:"finished_at"`
}

func (s *stack) installJobs(inst string) []installJob {
	s.t.Helper()
	return getList[installJob](s, "/v1/installs/"+inst+"/jobs?limit=200", "jobs")
}

// logTimes is when the job's log first held each of the texts (zero when
// it never did).
func (s *stack) logTimes(jobID string, texts ...string) []time.Time {
	s.t.Helper()
	at := make([]time.Time, len(texts))
	for _, c := range s.logs(jobID) {
		for i, text := range texts {
			if at[i].IsZero() && strings.Contains(c.Data, text) {
				at[i] = c.Time
			}
		}
	}
	return at
}

// A step whose dependency still runs gets its job queued early: the runner
// fetches the module and runs init meanwhile, and the variables (from the
// dependency's outputs, and the environment's TF_VAR_ rendered at queueing)
// arrive when the dependency is done. When the dependency fails, the waiting
// job is cancelled and the step skipped, having run no plan.
func TestPrestartedJobWaitsForItsDependency(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig("testdata/prestart-app")

	inst, _ := s.newInstall("cust-p", map[string]any{"name": "suffix", "value": "tail"})
	op := s.provisioned(inst, 5*time.Minute)
	slowStep, nextStep := op.step(t, "slow"), op.step(t, "next")
	slow := s.job(slowStep.ApplyJobID)
	var next installJob
	if code := s.do("GET", "/v1/jobs/"+nextStep.ApplyJobID, nil, &next); code != http.StatusOK {
		t.Fatalf("GET next's job: %d", code)
	}
	switch {
	case !next.InputsDeferred || next.InputsAt == nil || next.StartedAt == nil:
		t.Fatalf("next's job %+v: want it queued with deferred inputs, then given them", next)
	case !next.StartedAt.Before(slow.FinishedAt):
		t.Fatalf("next's job was claimed at %v, after slow's job ended at %v: it was not started early", next.StartedAt, slow.FinishedAt)
	case next.InputsAt.Before(slow.FinishedAt):
		t.Fatalf("next's variables were given at %v, before slow's job ended at %v", next.InputsAt, slow.FinishedAt)
	case nextStep.StartedAt.Before(*slowStep.FinishedAt):
		t.Fatalf("the next step started at %v, before the slow step ended at %v", nextStep.StartedAt, slowStep.FinishedAt)
	}
	// slow syncs its build in its plan_apply job and needs only the sandbox's registry (with its
	// variables): its job was queued, fetched its module and ran init while the sandbox applied.
	sandbox := s.job(op.step(t, status.SandboxStep).ApplyJobID)
	switch {
	case slowStep.SyncJobID != slowStep.PlanJobID:
		t.Fatalf("slow synced by job %q, planned by %q: want its plan_apply job to sync", slowStep.SyncJobID, slowStep.PlanJobID)
	case !slow.CreatedAt.Before(sandbox.FinishedAt) || slow.InputsAt == nil || slow.InputsAt.Before(sandbox.FinishedAt):
		t.Fatalf("slow's job queued at %v, given its inputs at %v; the sandbox's job ended at %v: want queued before, given after",
			slow.CreatedAt, slow.InputsAt, sandbox.FinishedAt)
	}
	at := s.logTimes(slowStep.ApplyJobID, "outpost: terraform initialised", "outpost: sync ")
	slowInit, slowSync := at[0], at[1]
	if slowInit.IsZero() || slowSync.IsZero() || !slowInit.Before(sandbox.FinishedAt) || slowSync.Before(*slow.InputsAt) {
		t.Fatalf("slow's job: init at %v, sync at %v; the sandbox's job ended at %v, slow's inputs came at %v",
			slowInit, slowSync, sandbox.FinishedAt, slow.InputsAt)
	}
	// init ran while slow still ran; the plan only once the variables came.
	at = s.logTimes(next.ID, "outpost: terraform initialised", "outpost: variables received", "Plan: 1 to add")
	initAt, varsAt, planAt := at[0], at[1], at[2]
	if initAt.IsZero() || varsAt.IsZero() || planAt.IsZero() || !initAt.Before(slow.FinishedAt) || varsAt.Before(slow.FinishedAt) || planAt.Before(varsAt) {
		t.Fatalf("next's job: init at %v, variables at %v, plan at %v; slow's job ended at %v", initAt, varsAt, planAt, slow.FinishedAt)
	}
	var outs struct {
		Outputs map[string]map[string]struct {
			Value any `json:"value"`
		} `json:"outputs"`
	}
	s.do("GET", "/v1/installs/"+inst+"/outputs", nil, &outs)
	if v := outs.Outputs["next"]["value"].Value; v != "slow/tail" {
		t.Fatalf("next's output = %v, want slow's output and the suffix: slow/tail", v)
	}
	if v := outs.Outputs["third"]["value"].Value; v != "slow/tail/third" {
		t.Fatalf("third's output = %v, want slow/tail/third", v)
	}
	// Two steps ahead at most: third's job (after next, after slow) was
	// queued early too, while next's still waited for its inputs, but only
	// once slow had its own.
	third := s.job(op.step(t, "third").ApplyJobID)
	if !third.CreatedAt.After(*slow.InputsAt) || !third.CreatedAt.Before(*next.InputsAt) {
		t.Fatalf("third's job was queued at %v; slow was given its inputs at %v, next at %v: want in between",
			third.CreatedAt, slow.InputsAt, next.InputsAt)
	}
	s.replay(op.WorkflowID)

	// A runner that runs one job at a time: no job it holds waits for one it
	// does not, so the provision goes through (the early jobs wait in the
	// queue).
	single, _ := s.newInstallWithRunner("cust-r", []string{"OUTPOST_CONCURRENCY=1"})
	op = s.waitOp(single, s.startOp(single, "/provision", nil).ID, 5*time.Minute)
	if op.Status != status.OpSucceeded {
		t.Fatalf("provision with a runner of concurrency 1: %s %q %+v", op.Status, op.Error, op.Steps)
	}

	// slow fails: next's and third's early jobs are cancelled, the steps
	// skipped.
	failing, _ := s.newInstall("cust-q", map[string]any{"name": "fail", "value": "true"})
	op = s.waitOp(failing, s.startOp(failing, "/provision", nil).ID, 5*time.Minute)
	if op.Status != status.OpFailed || op.step(t, "slow").Status != status.StepFailed {
		t.Fatalf("provision with a failing slow: %s %+v", op.Status, op.Steps)
	}
	if st := op.step(t, "next"); st.Status != status.StepSkipped || st.PlanJobID != "" || !strings.Contains(st.Error, "slow") {
		t.Fatalf("next step %+v: want skipped because of slow, with no plan", st)
	}
	if st := op.step(t, "third"); st.Status != status.StepSkipped || st.PlanJobID != "" {
		t.Fatalf("third step %+v: want skipped, with no plan", st)
	}
	// The operation asked for the cancel; the runner ends the job moments
	// later. (slow's own job was queued with deferred inputs too, while the
	// sandbox ran, and was given them.)
	var cancelled []installJob
	waitFor(t, time.Minute, "next's and third's waiting jobs to end", func() bool {
		cancelled = nil
		ended := 0
		for _, j := range s.installJobs(failing) {
			if j.InputsDeferred && j.Status != status.JobFailed {
				cancelled = append(cancelled, j)
				if j.FinishedAt != nil {
					ended++
				}
			}
		}
		return len(cancelled) != 2 || ended == 2
	})
	if len(cancelled) != 2 {
		t.Fatalf("jobs queued with deferred inputs that did not fail: %+v, want next's and third's", cancelled)
	}
	for _, j := range cancelled {
		if j.Status != status.JobCancelled || j.InputsAt != nil {
			t.Fatalf("job %+v: want cancelled without inputs", j)
		}
		for _, c := range s.logs(j.ID) {
			if strings.Contains(c.Data, "variables received") || strings.Contains(c.Data, "Plan:") {
				t.Fatalf("the cancelled job %s planned: %q", j.ID, c.Data)
			}
		}
	}
	s.replay(op.WorkflowID)
}
