package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/httpserver"
	"github.com/outpost-dev/outpost/status"
)

// An API shutting down (http.Server.Shutdown runs Drain) lets go of what it
// holds open: a log follow stream ends with a `resume` event after the last
// line it sent, which the client reconnects after (at another replica), and
// a ?wait= answers the command as it is. The shutdown then ends well before
// its deadline, held by neither.
func TestDrainEndsFollowStreamsAndWaits(t *testing.T) {
	e := newTestEnv(t)
	_, inst := e.fixture()
	job := e.runningJob(inst, "wf/drain")
	e.appendLines(job, 1, 2)
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = httpserver.New(e.srv.Handler(), httpserver.Defaults)
	ts.Config.RegisterOnShutdown(e.srv.Drain)
	ts.Start()
	t.Cleanup(ts.Close)
	e.http = ts

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := e.follow(ctx, job.ID, "")
	expectLines(t, events, 1, 2)
	var cmd commandView
	e.call("POST", "/v1/installs/"+inst.ID+"/commands", map[string]any{"command": []string{"uptime"}}, 202, &cmd)
	waited := make(chan commandView, 1)
	go func() {
		var got commandView
		e.call("GET", "/v1/installs/"+inst.ID+"/commands/"+cmd.ID+"?wait=60", nil, 200, &got)
		waited <- got
	}()
	<-e.ops.awaiting // the wait holds

	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer scancel()
	if err := ts.Config.Shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v (held by the stream or the wait)", err)
	}
	var last sseEvent
	for ev := range events {
		last = ev
	}
	var resume logResume
	if last.event != "resume" || json.Unmarshal([]byte(last.data), &resume) != nil || resume.After != "1.2" {
		t.Errorf("the stream ended with %+v, want a resume event after 1.2", last)
	}
	if got := <-waited; got.Status != status.JobQueued {
		t.Errorf("the drained wait answered %+v, want the command as it is (queued)", got)
	}
}
