package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// release is a release as the API shows it.
type release struct {
	ID            string `json:"id"`
	ConfigVersion int    `json:"config_version"`
	RollbackOf    string `json:"rollback_of"`
	WorkflowID    string `json:"workflow_id"`
	Status        string `json:"status"`
	Paused        bool   `json:"paused"`
	Error         string `json:"error"`
	Batches       []struct {
		Installs []releaseInstall `json:"installs"`
		Progress []string         `json:"progress"`
	} `json:"batches"`
	FinishedAt *time.Time `json:"finished_at"`
}

type releaseInstall struct {
	InstallID   string `json:"install_id"`
	InstallName string `json:"install_name"`
	FromVersion int    `json:"from_version"`
	ToVersion   int    `json:"to_version"`
	OperationID string `json:"operation_id"`
	Status      string `json:"status"`
	Error       string `json:"error"`
}

// A release of version 2 of a small app to six installs (selected by
// label) in batches of two, where version 2 fails for cust-4 (its input
// mode is "fail"): the first batch is updated, the release halts after the
// second naming cust-4, the third batch is untouched. Once cust-4's input
// is fixed, resume deploys it again and the rest. The rollback brings every
// install back to version 1, with its version 1 builds.
func TestReleaseAcrossInstalls(t *testing.T) {
	s := newStack(t, stackOptions{})
	dir := t.TempDir()
	copyDir(t, "testdata/release-app", dir)
	s.syncConfig(dir)
	insts := s.releaseInstalls(6, "cust-4")
	s.checkBadLabels(insts["cust-1"])
	v1 := map[string]map[string]installComponent{}
	for name, id := range insts {
		v1[name] = s.installComponents(id)
	}

	copyFile(t, "testdata/release-v2/main.tf", filepath.Join(dir, "modules", "second", "main.tf"))
	copyFile(t, "testdata/release-v2/second.toml", filepath.Join(dir, "components", "second.toml"))
	s.syncConfig(dir)
	s.checkBadReleases()

	r := s.startRelease(map[string]any{"config_version": 2, "installs": map[string]any{"selector": "env=prod,tier!=free"},
		"batch_size": 2, "failure_threshold": 1})
	if r.WorkflowID != "app/"+s.install.AppID+"/release/"+r.ID || len(r.Batches) != 3 {
		t.Fatalf("release %+v", r)
	}
	if code := s.do("POST", "/v1/apps/"+s.install.AppID+"/releases", map[string]any{"installs": map[string]any{"all": true}}, nil); code != http.StatusConflict {
		t.Fatalf("a second release while one runs = %d, want 409", code)
	}
	r = s.waitRelease(r.ID, "halted")
	if !strings.Contains(r.Error, "cust-4") || !strings.Contains(r.Error, "failed") {
		t.Fatalf("halted release says %q, want cust-4 named", r.Error)
	}
	checkBatch(t, r, 0, map[string]string{"cust-1": "succeeded", "cust-2": "succeeded"})
	checkBatch(t, r, 1, map[string]string{"cust-3": "succeeded", "cust-4": "failed"})
	checkBatch(t, r, 2, map[string]string{"cust-5": "pending", "cust-6": "pending"})
	for name, want := range map[string]int{"cust-1": 2, "cust-3": 2, "cust-4": 1, "cust-5": 1} {
		if v := s.installVersions(insts[name]).ConfigVersion; v != want {
			t.Fatalf("%s runs config version %d, want %d", name, v, want)
		}
	}
	failed := r.Batches[1].Installs[1]
	op := s.getOp(insts["cust-4"], failed.OperationID, 0)
	if op.Kind != "deploy_config" || op.Status != status.OpFailed || op.WorkflowID != "install/"+insts["cust-4"]+"/deploy_config" {
		t.Fatalf("cust-4's operation %+v", op)
	}

	if code := s.do("PATCH", "/v1/installs/"+insts["cust-4"]+"/inputs", map[string]any{"set": []map[string]any{{"name": "mode", "value": "ok"}}}, nil); code != http.StatusOK {
		t.Fatalf("fixing cust-4's input: %d", code)
	}
	s.controlRelease(r.ID, "resume")
	r = s.waitRelease(r.ID, "succeeded")
	for name, id := range insts {
		if v := s.installVersions(id).ConfigVersion; v != 2 {
			t.Fatalf("%s runs config version %d after the release, want 2", name, v)
		}
	}
	if ri := r.Batches[1].Installs[1]; ri.FromVersion != 1 || ri.OperationID == failed.OperationID {
		t.Fatalf("cust-4 after the resume: %+v", ri)
	}
	s.replay(r.WorkflowID)

	back := s.rollback(r.ID)
	for name, id := range insts {
		got := s.installComponents(id)
		for c, want := range v1[name] {
			if got[c].BuildID != want.BuildID || got[c].Digest != want.Digest || got[c].ConfigVersion != 1 {
				t.Fatalf("%s's %s runs %+v after the rollback, want %+v", name, c, got[c], want)
			}
		}
	}
	s.replay(back.WorkflowID)
}

// releaseInstalls creates n installs cust-1… labelled env=prod (failing's
// input mode fails version 2), each with its runner, and provisions them.
func (s *stack) releaseInstalls(n int, failing string) map[string]string {
	s.t.Helper()
	insts := map[string]string{}
	for i := 1; i <= n; i++ {
		name, mode := fmt.Sprintf("cust-%d", i), "ok"
		if name == failing {
			mode = "fail"
		}
		id, _ := s.newInstall(name, map[string]any{"name": "mode", "value": mode})
		var inst struct{ Labels map[string]string }
		if code := s.do("PUT", "/v1/installs/"+id+"/labels", map[string]any{"labels": map[string]string{"env": "prod", "tier": "paid"}}, &inst); code != http.StatusOK || inst.Labels["env"] != "prod" {
			s.t.Fatalf("labelling %s: %d %+v", name, code, inst)
		}
		insts[name] = id
	}
	s.provisionAll(insts)
	return insts
}

// provisionAll provisions the installs (name: id) side by side.
func (s *stack) provisionAll(insts map[string]string) {
	s.t.Helper()
	ops := map[string]string{}
	for name, id := range insts {
		ops[name] = s.startOp(id, "/provision", nil).ID
	}
	for name, id := range insts {
		if op := s.waitOp(id, ops[name], 5*time.Minute); op.Status != status.OpSucceeded {
			s.t.Fatalf("provision %s: %s %q", name, op.Status, op.Error)
		}
	}
}

// checkBadLabels: a bad label key or value is a 400 naming it; PATCH sets
// and removes labels.
func (s *stack) checkBadLabels(inst string) {
	s.t.Helper()
	var e struct{ Field, Message string }
	if code := s.do("PATCH", "/v1/installs/"+inst+"/labels", map[string]any{"set": map[string]string{"env": "not ok!"}}, &e); code != http.StatusBadRequest || e.Field != "set.env" {
		s.t.Fatalf("a bad label value = %d %+v, want 400 on set.env", code, e)
	}
	if code := s.do("PUT", "/v1/installs/"+inst+"/labels", map[string]any{"labels": map[string]string{"-bad": "x"}}, &e); code != http.StatusBadRequest || e.Field != "labels.-bad" {
		s.t.Fatalf("a bad label key = %d %+v, want 400 on labels.-bad", code, e)
	}
	var got struct{ Labels map[string]string }
	s.do("PATCH", "/v1/installs/"+inst+"/labels", map[string]any{"set": map[string]string{"canary": "yes"}}, nil)
	s.do("PATCH", "/v1/installs/"+inst+"/labels", map[string]any{"remove": []string{"canary"}}, nil)
	if s.do("GET", "/v1/installs/"+inst, nil, &got); len(got.Labels) != 2 || got.Labels["tier"] != "paid" {
		s.t.Fatalf("labels after a set and a remove: %v", got.Labels)
	}
}

// checkBadReleases: bad input is a 4xx naming the field, and starts no
// release.
func (s *stack) checkBadReleases() {
	s.t.Helper()
	prod := map[string]any{"selector": "env=prod"}
	for _, bad := range []struct {
		body  map[string]any
		code  int
		field string
	}{
		{map[string]any{"config_version": 9, "installs": prod}, http.StatusUnprocessableEntity, "config_version"},
		{map[string]any{"installs": map[string]any{"selector": "env=nowhere"}}, http.StatusUnprocessableEntity, "installs.selector"},
		{map[string]any{"installs": map[string]any{"selector": map[string]string{"env": "nowhere"}}}, http.StatusUnprocessableEntity, "installs.selector"},
		{map[string]any{"installs": map[string]any{"selector": "env==="}}, http.StatusBadRequest, "installs.selector"},
		{map[string]any{"installs": map[string]any{"names": []string{"cust-9"}}}, http.StatusUnprocessableEntity, "installs.names[0]"},
		{map[string]any{"installs": map[string]any{}}, http.StatusBadRequest, "installs"},
		{map[string]any{"installs": prod, "batch_size": 0}, http.StatusBadRequest, "batch_size"},
		{map[string]any{"installs": prod, "batch_percent": 120}, http.StatusBadRequest, "batch_percent"},
		{map[string]any{"installs": prod, "batch_size": 2, "batch_percent": 50}, http.StatusBadRequest, "batch_size"},
		{map[string]any{"installs": prod, "pause_between_batches": "soon"}, http.StatusBadRequest, "pause_between_batches"},
		{map[string]any{"installs": prod, "failure_threshold": 0}, http.StatusBadRequest, "failure_threshold"},
	} {
		var e struct{ Field, Message string }
		if code := s.do("POST", "/v1/apps/"+s.install.AppID+"/releases", bad.body, &e); code != bad.code || e.Field != bad.field || e.Message == "" {
			s.t.Fatalf("release %v = %d %+v, want %d on %s", bad.body, code, e, bad.code, bad.field)
		}
	}
	var list struct{ Releases []release }
	if s.do("GET", "/v1/apps/"+s.install.AppID+"/releases", nil, &list); len(list.Releases) != 0 {
		s.t.Fatalf("releases after refused ones: %+v", list.Releases)
	}
}

func (s *stack) startRelease(body any) release {
	s.t.Helper()
	var r release
	if code := s.do("POST", "/v1/apps/"+s.install.AppID+"/releases", body, &r); code != http.StatusAccepted {
		s.t.Fatalf("POST releases: %d %+v", code, r)
	}
	return r
}

func (s *stack) getRelease(id string) release {
	s.t.Helper()
	var r release
	s.get("/v1/apps/"+s.install.AppID+"/releases/"+id, &r)
	return r
}

// waitRelease waits until the release has the status.
func (s *stack) waitRelease(id, want string) release {
	s.t.Helper()
	var r release
	waitFor(s.t, 8*time.Minute, "release "+id+" to be "+want, func() bool {
		r = s.getRelease(id)
		if r.FinishedAt != nil && r.Status != want {
			for _, b := range r.Batches {
				for _, ri := range b.Installs {
					s.t.Logf("%s's operation: %+v", ri.InstallName, s.getOp(ri.InstallID, ri.OperationID, 0))
				}
			}
			s.t.Fatalf("release ended %s, want %s: %+v", r.Status, want, r)
		}
		return r.Status == want
	})
	return r
}

func (s *stack) controlRelease(id, action string) release {
	s.t.Helper()
	var r release
	if code := s.do("POST", "/v1/apps/"+s.install.AppID+"/releases/"+id+"/"+action, nil, &r); code != http.StatusAccepted {
		s.t.Fatalf("%s release: %d", action, code)
	}
	return r
}

// rollback rolls the release back, pausing the rollback once (it stops
// before a batch) and resuming it, and waits for it to succeed.
func (s *stack) rollback(id string) release {
	s.t.Helper()
	var r release
	if code := s.do("POST", "/v1/apps/"+s.install.AppID+"/releases/"+id+"/rollback", nil, &r); code != http.StatusAccepted || r.RollbackOf != id {
		s.t.Fatalf("rollback: %d %+v", code, r)
	}
	for _, b := range r.Batches {
		for _, ri := range b.Installs {
			if ri.ToVersion != 1 {
				s.t.Fatalf("the rollback brings %s to %d, want 1", ri.InstallName, ri.ToVersion)
			}
		}
	}
	s.controlRelease(r.ID, "pause")
	paused := s.waitRelease(r.ID, "paused")
	if last := paused.Batches[len(paused.Batches)-1].Installs[0]; last.Status != "pending" {
		s.t.Fatalf("a paused rollback deployed its last batch: %+v", last)
	}
	s.controlRelease(r.ID, "resume")
	return s.waitRelease(r.ID, "succeeded")
}

// checkBatch checks the status of each install of a release's batch.
func checkBatch(t *testing.T, r release, batch int, want map[string]string) {
	t.Helper()
	b := r.Batches[batch]
	if len(b.Installs) != len(want) {
		t.Fatalf("batch %d: %+v, want %v", batch, b.Installs, want)
	}
	for _, ri := range b.Installs {
		if want[ri.InstallName] != ri.Status {
			t.Fatalf("batch %d: %s is %s (%s), want %s", batch, ri.InstallName, ri.Status, ri.Error, want[ri.InstallName])
		}
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A release waits for each install's maintenance window: the install shows
// waiting until the window the API names next, with no operation started;
// a cancel ends the wait, the install skipped and still untouched.
func TestReleaseWaitsForMaintenanceWindow(t *testing.T) {
	s := newStack(t, stackOptions{})
	dir := t.TempDir()
	copyDir(t, "testdata/release-app", dir)
	s.syncConfig(dir)
	inst, _ := s.newInstall("cust-w")
	day := strings.ToLower(time.Now().UTC().Add(72 * time.Hour).Weekday().String()[:3])
	var windows struct {
		Next struct {
			Start time.Time `json:"start"`
		} `json:"next"`
	}
	body := map[string]any{"windows": []map[string]any{{"days": []string{day}, "start": "03:00", "duration": "1h", "time_zone": "UTC"}}}
	if code := s.do("PUT", "/v1/installs/"+inst+"/maintenance-windows", body, &windows); code != http.StatusOK || windows.Next.Start.IsZero() {
		t.Fatalf("setting a window: %d %+v", code, windows)
	}
	r := s.startRelease(map[string]any{"installs": map[string]any{"names": []string{"cust-w"}}})
	want := "cust-w: waiting for the maintenance window until " + windows.Next.Start.UTC().Format(time.RFC3339)
	waitFor(t, time.Minute, "the release to wait for cust-w's window", func() bool {
		r = s.getRelease(r.ID)
		return r.Batches[0].Installs[0].Status == "waiting"
	})
	if got := r.Batches[0].Progress[0]; got != want || r.Batches[0].Installs[0].OperationID != "" {
		t.Fatalf("progress %q (%+v), want %q", got, r.Batches[0].Installs[0], want)
	}
	s.controlRelease(r.ID, "cancel")
	r = s.waitRelease(r.ID, "cancelled")
	var ops struct {
		Operations []operation `json:"operations"`
	}
	if s.do("GET", "/v1/installs/"+inst+"/operations", nil, &ops); r.Batches[0].Installs[0].Status != "skipped" || len(ops.Operations) != 0 {
		t.Fatalf("after the cancel: %+v, operations %+v", r.Batches[0].Installs[0], ops.Operations)
	}
	s.replay(r.WorkflowID)
}
