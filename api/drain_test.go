package api

import (
	"context"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/internal/httpserver"
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
	srv := e.serve(httpserver.Defaults)
	srv.RegisterOnShutdown(e.srv.Drain)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := e.follow(ctx, job.ID, "")
	expectLines(t, events, 1, 2)
	var cmd wire.Command
	e.call("POST", "/v1/installs/"+inst.ID+"/commands", map[string]any{"command": []string{"uptime"}}, 202, &cmd)
	waited := make(chan wire.Command, 1)
	go func() {
		var got wire.Command
		e.call("GET", "/v1/installs/"+inst.ID+"/commands/"+cmd.ID+"?wait=60", nil, 200, &got)
		waited <- got
	}()
	<-e.ops.awaiting // the wait holds

	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v (held by the stream or the wait)", err)
	}
	expectResume(t, events, "1.2")
	if got := <-waited; got.Status != string(status.JobQueued) {
		t.Errorf("the drained wait answered %+v, want the command as it is (queued)", got)
	}
}
