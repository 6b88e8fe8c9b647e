package workflows

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// gateRun is a release run in the test environment with its activities
// mocked: what it deployed and rolled back (operation IDs, with when), its
// statuses, the installs it marked unhealthy and its health reads.
type gateRun struct {
	env                 *testsuite.TestWorkflowEnvironment
	mu                  sync.Mutex
	start               time.Time
	ops, statuses, bad  []string
	opAt                map[string]time.Duration
	reads               int
	health              func(inst string, at time.Duration) contract.InstallHealth
	readErr             error // what every health read fails with
	releaseInstallNames map[string]string
}

// newGateRun mocks a release of plan whose installs' health is health(install,
// time since the workflow began).
func newGateRun(plan contract.ReleasePlan, health func(string, time.Duration) contract.InstallHealth) *gateRun {
	g := &gateRun{env: newEnv(), opAt: map[string]time.Duration{}, health: health}
	env := g.env
	registerActivities(env)
	env.RegisterWorkflow(Release)
	g.start = env.Now()
	env.OnActivity(contract.LoadRelease, mockAny, "rel_1").Return(plan, nil)
	env.OnActivity(contract.NextMaintenanceWindow, mockAny, mockAny).Return(contract.Window{None: true}, nil)
	for _, begin := range []struct{ name, prefix string }{{contract.BeginReleaseDeploy, "op-"}, {contract.BeginReleaseRollback, "rb-"}} {
		env.OnActivity(begin.name, mockAny, "rel_1", mockAny).Return(func(_ context.Context, _, inst string) (contract.ReleaseDeploy, error) {
			return contract.ReleaseDeploy{OperationID: begin.prefix + inst, WorkflowID: "install/" + inst + "/deploy_config"}, nil
		}).Maybe()
	}
	env.RegisterWorkflowWithOptions(func(workflow.Context, contract.OperationInput) (contract.OperationResult, error) {
		return contract.OperationResult{}, nil
	}, workflow.RegisterOptions{Name: contract.WorkflowDeployConfig})
	env.OnWorkflow(contract.WorkflowDeployConfig, mockAny, mockAny).Return(func(_ workflow.Context, in contract.OperationInput) (contract.OperationResult, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.ops = append(g.ops, in.OperationID)
		g.opAt[in.OperationID] = env.Now().Sub(g.start)
		return contract.OperationResult{Status: status.OpSucceeded}, nil
	}).Maybe()
	for _, finish := range []string{contract.FinishReleaseDeploy, contract.FinishReleaseRollback} {
		env.OnActivity(finish, mockAny, "rel_1", mockAny, mockAny, "").Return("", nil).Maybe()
	}
	env.OnActivity(contract.ReleaseBatchHealth, mockAny, "rel_1", mockAny).Return(func(_ context.Context, _ string, ids []string) ([]contract.InstallHealth, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.reads++
		if g.readErr != nil {
			return nil, g.readErr
		}
		out := make([]contract.InstallHealth, len(ids))
		for i, id := range ids {
			out[i] = g.health(id, env.Now().Sub(g.start))
			out[i].InstallID, out[i].InstallName = id, "cust-"+strings.TrimPrefix(id, "ins_")
		}
		return out, nil
	}).Maybe()
	env.OnActivity(contract.MarkReleaseInstallUnhealthy, mockAny, "rel_1", mockAny, mockAny).Return(func(_ context.Context, _, inst, _ string) error {
		g.bad = append(g.bad, inst)
		return nil
	}).Maybe()
	env.OnActivity(contract.SetReleaseStatus, mockAny, "rel_1", mockAny, mockAny).Return(func(_ context.Context, _ string, st status.Release, why string) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.statuses = append(g.statuses, string(st)+": "+why)
		return nil
	})
	env.OnActivity(contract.SkipReleaseInstalls, mockAny, "rel_1").Return(nil).Maybe()
	return g
}

// signalAt signals the release action after d.
func (g *gateRun) signalAt(d time.Duration, action string) {
	g.env.RegisterDelayedCallback(func() {
		g.env.SignalWorkflow(contract.ReleaseSignal, contract.ReleaseControl{Action: action})
	}, d)
}

func (g *gateRun) run(t *testing.T) {
	t.Helper()
	g.env.ExecuteWorkflow(Release, contract.ReleaseInput{ReleaseID: "rel_1"})
	if err := g.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
}

func healthy(string, time.Duration) contract.InstallHealth {
	return contract.InstallHealth{State: protocol.HealthHealthy}
}

// notReady is the health of an install whose web Deployment has no ready
// replica.
var notReady = contract.InstallHealth{State: protocol.HealthUnhealthy, Component: "web", Object: "Deployment/default/web",
	Condition: "Available=False (MinimumReplicasUnavailable): Deployment does not have minimum availability; 0/1 available"}

// A batch that stays healthy through its soak passes: the next batch
// deploys once the soak has ended, and the release succeeds after the last
// batch's soak.
func TestReleaseGateHealthyBatchPassesAfterSoak(t *testing.T) {
	g := newGateRun(contract.ReleasePlan{Batches: [][]string{{"ins_1", "ins_2"}, {"ins_3"}}, FailureThreshold: 1,
		Soak: 2 * time.Minute, OnUnhealthy: contract.OnUnhealthyHalt}, healthy)
	g.run(t)
	if want := []string{"succeeded: "}; !slices.Equal(g.statuses, want) {
		t.Fatalf("statuses %q, want %q", g.statuses, want)
	}
	if len(g.ops) != 3 || g.opAt["op-ins_3"] < 2*time.Minute {
		t.Fatalf("deploys %q at %v: want ins_3 deployed after the first batch's 2m soak", g.ops, g.opAt)
	}
	if g.reads != 10 || len(g.bad) != 0 {
		t.Fatalf("%d health reads, unhealthy %q: want 5 per batch (every 30s of 2m, and at its end), none unhealthy", g.reads, g.bad)
	}
	if d := g.env.Now().Sub(g.start); d < 4*time.Minute {
		t.Fatalf("the release ended %v after it began: want after both batches' soaks", d)
	}
}

// An install that turns unhealthy during its batch's soak halts the
// release at once, naming the install, component, object and condition;
// the next batch is untouched until the release is resumed.
func TestReleaseGateUnhealthyHaltsNamingTheInstall(t *testing.T) {
	g := newGateRun(contract.ReleasePlan{Batches: [][]string{{"ins_1", "ins_2"}, {"ins_3"}}, FailureThreshold: 1,
		Soak: 10 * time.Minute, OnUnhealthy: contract.OnUnhealthyHalt}, func(inst string, at time.Duration) contract.InstallHealth {
		if inst == "ins_2" && at >= time.Minute {
			return notReady
		}
		return contract.InstallHealth{State: protocol.HealthHealthy}
	})
	var opsAtHalt []string
	g.env.RegisterDelayedCallback(func() { opsAtHalt = slices.Sorted(slices.Values(g.ops)) }, time.Hour-time.Second)
	g.signalAt(time.Hour, contract.ReleaseResume)
	g.run(t)
	halt := "halted: install cust-2 is unhealthy 1m0s into the 10m0s soak: web: Deployment/default/web: " + notReady.Condition
	if want := []string{halt, "running: ", "succeeded: "}; !slices.Equal(g.statuses, want) {
		t.Fatalf("statuses %q,\nwant %q", g.statuses, want)
	}
	if !slices.Equal(g.bad, []string{"ins_2"}) || !slices.Equal(opsAtHalt, []string{"op-ins_1", "op-ins_2"}) {
		t.Fatalf("unhealthy %q, deploys while halted %q: want ins_2, and only the first batch", g.bad, opsAtHalt)
	}
	if len(g.ops) != 3 || g.ops[2] != "op-ins_3" || g.opAt["op-ins_3"] < time.Hour {
		t.Fatalf("deploys %q: want ins_3 deployed once resumed", g.ops)
	}
}

// With on_unhealthy rollback, an install not healthy at the end of the soak
// (unknown: its runner is offline) rolls its whole batch back to the
// versions it ran before, then halts; cancelled, the next batch is skipped.
func TestReleaseGateRollsBackTheBatchThenHalts(t *testing.T) {
	g := newGateRun(contract.ReleasePlan{Batches: [][]string{{"ins_1", "ins_2"}, {"ins_3"}}, FailureThreshold: 1,
		Soak: 5 * time.Minute, OnUnhealthy: contract.OnUnhealthyRollback}, func(inst string, at time.Duration) contract.InstallHealth {
		if inst == "ins_1" && at >= 3*time.Minute {
			return contract.InstallHealth{State: protocol.HealthUnknown, Condition: "its runner is offline (last seen 2026-01-01T00:03:00Z)"}
		}
		return contract.InstallHealth{State: protocol.HealthHealthy}
	})
	g.signalAt(time.Hour, contract.ReleaseCancel)
	g.run(t)
	halt := "halted: install cust-1 is unknown at the end of the 5m0s soak: its runner is offline (last seen 2026-01-01T00:03:00Z)" +
		"; batch 1 rolled back to the versions it ran before"
	if want := []string{halt, "cancelled: "}; !slices.Equal(g.statuses, want) {
		t.Fatalf("statuses %q,\nwant %q", g.statuses, want)
	}
	slices.Sort(g.ops)
	if want := []string{"op-ins_1", "op-ins_2", "rb-ins_1", "rb-ins_2"}; !slices.Equal(g.ops, want) || !slices.Equal(g.bad, []string{"ins_1"}) {
		t.Fatalf("operations %q, unhealthy %q: want the first batch deployed and rolled back, ins_3 untouched, ins_1 unhealthy", g.ops, g.bad)
	}
	if g.opAt["rb-ins_1"] < 5*time.Minute {
		t.Fatalf("rolled back at %v: want at the end of the soak", g.opAt["rb-ins_1"])
	}
}

// A release without a soak reads no health and waits for none: batches
// follow each other at once, as before the gate.
func TestReleaseWithoutSoakHasNoGate(t *testing.T) {
	g := newGateRun(contract.ReleasePlan{Batches: [][]string{{"ins_1"}, {"ins_2"}}, FailureThreshold: 1},
		func(string, time.Duration) contract.InstallHealth { return notReady })
	g.run(t)
	if want := []string{"succeeded: "}; !slices.Equal(g.statuses, want) || len(g.ops) != 2 || g.reads != 0 {
		t.Fatalf("statuses %q, deploys %q, %d health reads: want both deployed, no read", g.statuses, g.ops, g.reads)
	}
	if d := g.env.Now().Sub(g.start); d > time.Second {
		t.Fatalf("the release took %v of workflow time: want no wait", d)
	}
}

// A cancel during a soak ends it: the batch is not judged, the next is
// skipped. A health read that fails halts the release saying so, marking no
// install unhealthy.
func TestReleaseGateCancelledOrUnreadable(t *testing.T) {
	plan := contract.ReleasePlan{Batches: [][]string{{"ins_1"}, {"ins_2"}}, FailureThreshold: 1, Soak: 10 * time.Minute,
		OnUnhealthy: contract.OnUnhealthyRollback}
	g := newGateRun(plan, healthy)
	g.signalAt(time.Minute, contract.ReleaseCancel)
	g.run(t)
	if want := []string{"cancelled: "}; !slices.Equal(g.statuses, want) || !slices.Equal(g.ops, []string{"op-ins_1"}) {
		t.Fatalf("statuses %q, operations %q: want cancelled after ins_1 only", g.statuses, g.ops)
	}
	if d := g.env.Now().Sub(g.start); d > 2*time.Minute {
		t.Fatalf("the cancelled release ended %v after it began: want at the cancel, 1m into the soak", d)
	}

	g = newGateRun(plan, healthy)
	g.readErr = temporal.NewNonRetryableApplicationError("database is down", "Unavailable", nil)
	g.signalAt(time.Hour, contract.ReleaseCancel)
	g.run(t)
	want := []string{"halted: the health gate could not read the batch's health: database is down", "cancelled: "}
	if !slices.Equal(g.statuses, want) || len(g.bad) != 0 || slices.Contains(g.ops, "rb-ins_1") {
		t.Fatalf("statuses %q, unhealthy %q, operations %q: want %q, none unhealthy, no rollback", g.statuses, g.bad, g.ops, want)
	}
}
