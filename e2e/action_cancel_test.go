package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
)

// Cancelling an action run through the API: the running step's process on
// the runner gets SIGTERM, its job ends cancelled, the next step is
// skipped, the run ends cancelled, and a second cancel is 409.
func TestCancelActionRun(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.startRunner()
	s.syncConfig("testdata/action-app")
	run := s.runAction("slow", nil)
	var job string
	waitFor(t, 2*time.Minute, "the slow step to wait", func() bool {
		var got wire.ActionRun
		s.do("GET", "/v1/installs/"+s.install.ID+"/action-runs/"+run.ID, nil, &got)
		if len(got.Steps) > 0 && got.Steps[0].JobID != nil {
			job = *got.Steps[0].JobID
		}
		return job != "" && s.logsContain(job, "waiting")
	})

	path := "/v1/installs/" + s.install.ID + "/action-runs/" + run.ID + "/cancel"
	var asked wire.ActionRun
	if code := s.do("POST", path, nil, &asked); code != http.StatusAccepted || asked.ID != run.ID {
		t.Fatalf("cancel: %d %+v", code, asked)
	}
	done := s.waitActionRun(run.ID, time.Minute)
	if done.Status != "cancelled" || done.Steps[0].Status != "cancelled" || done.Steps[1].Status != "skipped" {
		t.Fatalf("run %+v, want cancelled with its second step skipped", done)
	}
	var j struct{ Status status.Job }
	waitFor(t, 30*time.Second, "the step's job to be recorded cancelled, its process told", func() bool {
		s.do("GET", "/v1/jobs/"+job, nil, &j)
		return j.Status == status.JobCancelled && s.logsContain(job, "stopped by TERM")
	})
	var e struct{ Message string }
	if code := s.do("POST", path, nil, &e); code != http.StatusConflict || !strings.Contains(e.Message, "already finished (cancelled)") {
		t.Fatalf("a second cancel: %d %+v, want 409", code, e)
	}
}
