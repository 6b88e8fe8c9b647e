package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// PostgreSQL restarted again and again while an install provisions (a
// server of the test's own, not the shared one): what met the database away
// is retried, the operation succeeds, and each step's jobs ran once.
func TestProvisionRidesOutPostgresRestarts(t *testing.T) {
	pg := storetest.StartServer(t)
	// Leases outlive an outage: the test is about the store's errors, not
	// about attempts lost with their leases.
	s := newStack(t, stackOptions{postgres: pg.AdminURL(),
		intervals: protocol.Intervals{ClaimWaitMS: 2000, JobHeartbeatMS: 500, LeaseMS: 15000, RunnerHeartbeatMS: 2000}})
	s.syncConfig("testdata/prestart-app")
	inst, _ := s.newInstall("cust-r")
	opID := s.startOp(inst, "/provision", nil).ID

	n := s.restartWhileRunning(pg, opID)
	if n < 3 {
		t.Fatalf("only %d restarts while the provision ran: the test shows nothing", n)
	}
	t.Logf("PostgreSQL restarted %d times while the provision ran", n)
	op := s.waitOp(inst, opID, 5*time.Minute)
	if op.Status != status.OpSucceeded {
		t.Fatalf("provision: %s %q %+v", op.Status, op.Error, op.Steps)
	}
	s.checkJobsRanOnce(inst, op, status.SandboxStep, "slow", "next", "third")
	s.checkBuiltOnce(inst)
	ctx := context.Background()
	if i, err := s.store.GetInstall(ctx, s.orgID, inst); err != nil || i.Status != status.InstallActive {
		t.Errorf("install: %s, %v; want %s", i.Status, err, status.InstallActive)
	}
	s.replay(op.WorkflowID)
}

// restartWhileRunning restarts the server (down for two seconds) every
// second until the operation has finished, ten times at most; it returns
// how many restarts the operation saw.
func (s *stack) restartWhileRunning(pg *storetest.Server, opID string) int {
	finished := func() bool {
		// The first statements after a restart may meet connections it cut.
		for range 5 {
			if op, err := s.store.GetOperation(context.Background(), s.orgID, opID); err == nil {
				return op.FinishedAt != nil
			}
			time.Sleep(200 * time.Millisecond)
		}
		return false
	}
	for n := range 10 {
		time.Sleep(time.Second)
		if finished() {
			return n
		}
		pg.Stop()
		time.Sleep(2 * time.Second)
		pg.Start()
	}
	return 10
}

// checkJobsRanOnce checks the operation's steps succeeded and that no job
// was queued twice, nor run twice: the install's jobs (debug commands and
// action runs of no operation aside) are the steps' jobs and those of the
// operation's hooks, each with one attempt.
func (s *stack) checkJobsRanOnce(inst string, op operation, steps ...string) {
	s.t.Helper()
	stepJobs := map[string]bool{}
	for _, name := range steps {
		st := op.step(s.t, name)
		if st.Status != status.StepSucceeded {
			s.t.Fatalf("step %s: %+v", name, st)
		}
		for _, id := range []string{st.PlanJobID, st.ApplyJobID, st.SyncJobID} {
			if id != "" {
				stepJobs[id] = true
			}
		}
	}
	all := s.installJobs(inst) // before the action jobs: a scheduled run's job made between is then in neither
	hooks, others := s.actionJobs(inst, op.ID)
	for id := range hooks {
		stepJobs[id] = true
	}
	var jobs []installJob
	for _, j := range all {
		if j.Type != protocol.JobTypeCommand && !others[j.ID] {
			jobs = append(jobs, j)
		}
	}
	for _, j := range jobs {
		if !stepJobs[j.ID] {
			s.t.Errorf("job %s (%s) belongs to no step: a job queued twice?", j.ID, j.Type)
		}
		if a := s.job(j.ID).Attempts; len(a) != 1 {
			s.t.Errorf("job %s ran %d attempts: %+v", j.ID, len(a), a)
		}
	}
	if len(jobs) != len(stepJobs) {
		s.t.Errorf("%d jobs for the install, the steps name %d", len(jobs), len(stepJobs))
	}
}

// checkBuiltOnce checks each component of the install's app was built
// once, by one job.
func (s *stack) checkBuiltOnce(inst string) {
	s.t.Helper()
	i, err := s.store.GetInstall(context.Background(), s.orgID, inst)
	if err != nil {
		s.t.Fatal(err)
	}
	builds, err := s.store.ListBuilds(context.Background(), s.orgID, i.AppID, store.BuildFilter{})
	if err != nil {
		s.t.Fatal(err)
	}
	per := map[string]int{}
	for _, b := range builds {
		per[b.Component]++
		if b.Status != status.BuildSucceeded || b.JobID == nil {
			s.t.Errorf("build %s of %s: %s (job %v)", b.ID, b.Component, b.Status, b.JobID)
		}
	}
	for c, n := range per {
		if n != 1 {
			s.t.Errorf("%d builds of %s, want one", n, c)
		}
	}
}
