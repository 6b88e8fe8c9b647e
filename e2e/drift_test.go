package e2e

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// driftRow is one component of GET /v1/installs/:id/drift.
type driftRow struct {
	Name        string     `json:"name"`
	Drifted     bool       `json:"drifted"`
	Since       *time.Time `json:"since"`
	Plan        string     `json:"plan"`
	OperationID string     `json:"operation_id"`
}

// driftApp is the drift test app in a directory of its own: watched reads
// a file the test changes, gated a FIFO the test serves (gate).
type driftApp struct {
	dir, watched string
	gate         *fifoGate
}

func newDriftApp(t *testing.T) driftApp {
	t.Helper()
	d := driftApp{dir: t.TempDir(), watched: filepath.Join(t.TempDir(), "watched")}
	copyDir(t, "testdata/drift-app", d.dir)
	d.write(t, "one")
	fifo := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	d.gate = serveFIFO(t, fifo)
	for file, from := range map[string]string{"watched.toml": "WATCHED_FILE", "gated.toml": "GATE_FIFO"} {
		to := map[string]string{"WATCHED_FILE": d.watched, "GATE_FIFO": fifo}[from]
		p := filepath.Join(d.dir, "components", file)
		b, _ := os.ReadFile(p)
		os.WriteFile(p, bytes.ReplaceAll(b, []byte(from), []byte(to)), 0o644)
	}
	return d
}

// write changes the watched file: the world behind terraform's back.
func (d driftApp) write(t *testing.T, v string) {
	if err := os.WriteFile(d.watched, []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fifoGate writes "open" to every reader of a FIFO while it is open; shut,
// a reader blocks until it opens again.
type fifoGate struct{ open atomic.Bool }

func serveFIFO(t *testing.T, path string) *fifoGate {
	g := &fifoGate{}
	g.open.Store(true)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if !g.open.Load() {
				continue
			}
			// Non-blocking: fails (ENXIO) while no reader has it open.
			f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				continue
			}
			f.Write([]byte("open"))
			f.Close()
		}
	}()
	return g
}

func (s *stack) drift(inst string) map[string]driftRow {
	s.t.Helper()
	var got struct {
		Components []driftRow `json:"components"`
	}
	s.get("/v1/installs/"+inst+"/drift", &got)
	out := map[string]driftRow{}
	for _, r := range got.Components {
		out[r.Name] = r
	}
	return out
}

// provisionedDriftApp is a stack with an install of the drift app,
// provisioned.
func provisionedDriftApp(t *testing.T, name string) (*stack, driftApp, string) {
	s := newStack(t, stackOptions{})
	app := newDriftApp(t)
	s.syncConfig(app.dir)
	inst, _ := s.newInstall(name)
	s.provisioned(inst, 5*time.Minute)
	return s, app, inst
}

func (s *stack) put(path string, body any) (int, map[string]any) {
	s.t.Helper()
	var out map[string]any
	return s.do("PUT", path, body, &out), out
}

// A component whose world changed behind terraform's back is found drifted,
// with its plan, by a scheduled check; a deploy started while a check runs
// (held up in a plan) starts at once, and its apply clears the drift.
func TestDriftScheduledCheckAndDeploy(t *testing.T) {
	s, app, inst := provisionedDriftApp(t, "cust-drift")
	check := s.waitOp(inst, s.startOp(inst, "/drift-check", nil).ID, 2*time.Minute)
	if check.Status != status.OpSucceeded || check.step(t, "watched").Status != status.StepNoChanges ||
		check.step(t, "gated").Status != status.StepNoChanges || check.step(t, status.SandboxStep).Status != status.StepNoChanges {
		t.Fatalf("a check of an install as applied: %s %q %+v", check.Status, check.Error, check.Steps)
	}

	app.write(t, "two")
	if code, body := s.put("/v1/installs/"+inst+"/drift-schedule", map[string]any{"every": "ten minutes"}); code != http.StatusBadRequest || body["field"] != "every" {
		t.Fatalf("a bad interval: %d %v", code, body)
	}
	if code, body := s.put("/v1/installs/"+inst+"/drift-schedule", map[string]any{"every": "2s"}); code != http.StatusOK {
		t.Fatalf("PUT drift-schedule: %d %v", code, body)
	}
	waitFor(t, 2*time.Minute, "a scheduled check to find watched drifted", func() bool { return s.drift(inst)["watched"].Drifted })
	s.put("/v1/installs/"+inst+"/drift-schedule", map[string]any{"every": ""})
	found := s.drift(inst)["watched"]
	if found.Since == nil || !strings.Contains(found.Plan, `"two"`) || s.drift(inst)["gated"].Drifted {
		t.Fatalf("drift of watched: %+v; of gated: %+v", found, s.drift(inst)["gated"])
	}
	by := s.getOp(inst, found.OperationID, 0)
	if by.Kind != "drift_check" || !strings.HasPrefix(by.WorkflowID, "install/"+inst+"/drift_check-") ||
		by.step(t, "watched").Status != status.StepDrifted {
		t.Fatalf("the check that found it: %+v", by)
	}
	s.replay(by.WorkflowID)
	// A scheduled check may still run: wait for it before holding one up.
	app.gate.open.Store(false)
	var held operation
	waitFor(t, time.Minute, "the scheduled checks to end", func() bool {
		return s.do("POST", "/v1/installs/"+inst+"/drift-check", nil, &held) == http.StatusAccepted
	})
	waitFor(t, time.Minute, "the check's plan of gated to start", func() bool {
		for _, st := range s.getOp(inst, held.ID, 0).Steps {
			if st.Name == "gated" && st.StartedAt != nil {
				return true
			}
		}
		return false
	})

	asked := time.Now()
	deploy := s.waitOp(inst, s.startOp(inst, "/components/watched/deploy", nil).ID, 2*time.Minute)
	st := deploy.step(t, "watched")
	if deploy.Status != status.OpSucceeded || st.StartedAt == nil || st.StartedAt.Sub(asked) > 5*time.Second {
		t.Fatalf("a deploy while a check runs: %s %q, watched started %v after it was asked", deploy.Status, deploy.Error, st.StartedAt.Sub(asked))
	}
	if h := s.getOp(inst, held.ID, 0); h.FinishedAt != nil {
		t.Fatalf("the held check ended before the deploy did: %+v", h)
	}
	if d := s.drift(inst)["watched"]; d.Drifted || d.OperationID != deploy.ID {
		t.Fatalf("drift of watched after its deploy: %+v", d)
	}
	app.gate.open.Store(true)
	if h := s.waitOp(inst, held.ID, 2*time.Minute); h.Status != status.OpSucceeded {
		t.Fatalf("the held check: %s %q %+v", h.Status, h.Error, h.Steps)
	}
}

// waitingOp is an operation as it waits for a maintenance window.
type waitingOp struct {
	Status       status.Op  `json:"status"`
	WaitingUntil *time.Time `json:"waiting_until"`
}

// waitShowsWindow waits until the operation shows it waits for the window
// that opens at opens.
func (s *stack) waitShowsWindow(inst, opID string, opens time.Time) {
	s.t.Helper()
	var w waitingOp
	waitFor(s.t, 2*time.Minute, "operation "+opID+" to wait for the maintenance window", func() bool {
		s.do("GET", "/v1/installs/"+inst+"/operations/"+opID, nil, &w)
		return w.Status == status.OpWaitingForWindow
	})
	if w.WaitingUntil == nil || !w.WaitingUntil.Equal(opens) {
		s.t.Fatalf("operation %s waits until %v, want %s", opID, w.WaitingUntil, opens)
	}
}

// everyDay is a window of every day from start (UTC, HH:MM) for duration.
func everyDay(start time.Time, duration string) []map[string]any {
	return []map[string]any{{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"},
		"start": start.UTC().Format("15:04"), "duration": duration, "time_zone": "UTC"}}
}

// An install that reconciles drift waits for its maintenance window (the
// check shows waiting_for_maintenance_window until it opens), and inside
// its window reconciles at once: a reconcile_drift applies the drifted
// component and the one that reads its outputs, and nothing else. A user's
// operation asked to wait for the window waits the same way.
func TestDriftReconcileInMaintenanceWindow(t *testing.T) {
	s, app, inst := provisionedDriftApp(t, "cust-window")
	windows := "/v1/installs/" + inst + "/maintenance-windows"
	bad := []map[string]any{{"days": []string{"sat"}, "start": "02:00", "duration": "4h", "time_zone": "Europe/Atlantis"}}
	if code, body := s.put(windows, map[string]any{"windows": bad}); code != http.StatusBadRequest || body["field"] != "windows[0].time_zone" ||
		!strings.Contains(body["message"].(string), "Europe/Atlantis") {
		t.Fatalf("a window in a bad time zone: %d %v", code, body)
	}
	now := time.Now().UTC()
	later := now.Add(3 * time.Hour).Truncate(time.Minute)
	if code, body := s.put(windows, map[string]any{"windows": everyDay(later, "1h")}); code != http.StatusOK {
		t.Fatalf("PUT windows: %d %v", code, body)
	}
	if code, body := s.put("/v1/installs/"+inst+"/drift-schedule", map[string]any{"every": "", "reconcile": true}); code != http.StatusOK {
		t.Fatalf("PUT drift-schedule: %d %v", code, body)
	}

	app.write(t, "two")
	check := s.startOp(inst, "/drift-check", nil)
	s.waitShowsWindow(inst, check.ID, later)
	if !s.drift(inst)["watched"].Drifted {
		t.Fatalf("drift before the window: %+v", s.drift(inst))
	}
	s.do("POST", "/v1/installs/"+inst+"/operations/"+check.ID+"/cancel", nil, nil)
	if done := s.waitOp(inst, check.ID, time.Minute); done.Status != status.OpCancelled {
		t.Fatalf("a check cancelled while it waited: %s %q", done.Status, done.Error)
	}
	s.replay(check.WorkflowID)

	user := s.startOp(inst, "/reprovision", map[string]any{"in_maintenance_window": true})
	s.waitShowsWindow(inst, user.ID, later)
	s.do("POST", "/v1/installs/"+inst+"/operations/"+user.ID+"/cancel", nil, nil)
	s.waitOp(inst, user.ID, time.Minute)

	if code, body := s.put(windows, map[string]any{"windows": everyDay(now.Add(-time.Minute), "2h")}); code != http.StatusOK {
		t.Fatalf("PUT windows: %d %v", code, body)
	}
	check = s.waitOp(inst, s.startOp(inst, "/drift-check", nil).ID, 2*time.Minute)
	if check.Status != status.OpSucceeded || check.Error != "" {
		t.Fatalf("a check inside the window: %s %q %+v", check.Status, check.Error, check.Steps)
	}
	s.replay(check.WorkflowID)
	reconcile := s.reconcileOf(inst, check)
	done := s.waitOp(inst, reconcile.ID, 3*time.Minute)
	if done.Status != status.OpSucceeded {
		t.Fatalf("the reconcile: %s %q %+v", done.Status, done.Error, done.Steps)
	}
	s.checkReconciled(inst, done)
	s.replay(reconcile.WorkflowID)
}

// reconcileOf waits for the reconcile_drift the check started: named after
// its install, triggered by the check.
func (s *stack) reconcileOf(inst string, check operation) operation {
	s.t.Helper()
	var reconcile operation
	waitFor(s.t, time.Minute, "the reconcile to start", func() bool {
		var ops struct {
			Operations []operation `json:"operations"`
		}
		s.do("GET", "/v1/installs/"+inst+"/operations", nil, &ops)
		reconcile = ops.Operations[0]
		return reconcile.ID != check.ID && reconcile.Kind != "drift_check"
	})
	if reconcile.Kind != "reconcile_drift" || reconcile.TriggeredBy != check.ID || reconcile.WorkflowID != "install/"+inst+"/reconcile_drift" {
		s.t.Fatalf("the operation after the check %s: %+v", check.ID, reconcile)
	}
	return reconcile
}

// checkReconciled: the reconcile applied the drifted component, watched, and
// follower, whose variable reads watched's output; the sandbox and gated
// ran no job; watched's drift is cleared by the reconcile.
func (s *stack) checkReconciled(inst string, done operation) {
	s.t.Helper()
	for _, name := range []string{"watched", "follower"} {
		if st := done.step(s.t, name); st.Status != status.StepSucceeded || st.PlanJobID == "" {
			s.t.Fatalf("the reconcile's %s: %+v", name, st)
		}
	}
	for _, name := range []string{status.SandboxStep, "gated"} {
		if st := done.step(s.t, name); st.Status != status.StepUnchanged || st.PlanJobID != "" || st.ApplyJobID != "" ||
			st.SyncJobID != "" || st.Plan != "" || st.StartedAt != nil {
			s.t.Fatalf("the reconcile's %s, not drifted: %+v", name, st)
		}
	}
	if d := s.drift(inst)["watched"]; d.Drifted || d.OperationID != done.ID {
		s.t.Fatalf("drift of watched after the reconcile: %+v", d)
	}
	var outs struct {
		Outputs map[string]map[string]struct {
			Value any `json:"value"`
		} `json:"outputs"`
	}
	s.do("GET", "/v1/installs/"+inst+"/outputs", nil, &outs)
	if w, f := outs.Outputs["watched"]["value"].Value, outs.Outputs["follower"]["value"].Value; w != "two" || f != "two" {
		s.t.Fatalf("outputs after the reconcile: watched %v, follower %v; want both two", w, f)
	}
}
