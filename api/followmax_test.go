package api

import (
	"context"
	"encoding/json"
	"github.com/outpost-dev/outpost/api/wire"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/httpserver"
)

// A follow stream ends at FollowMax with a `resume` event naming the last
// cursor sent, and reconnecting after it goes on. The server's read and write
// timeouts, far shorter, do not cut the stream before.
func TestFollowLogsEndsAtItsMaximumAndResumes(t *testing.T) {
	e := newTestEnvWithOps(t, nil, func(cfg *Config) { cfg.FollowMax = 2 * time.Second })
	limits := httpserver.Limits{ReadHeader: time.Second, Read: 300 * time.Millisecond, Write: 300 * time.Millisecond,
		Idle: time.Second, MaxHeaderBytes: 64 << 10}
	_, inst := e.fixture()
	job := e.runningJob(inst, "wf/followmax")
	e.appendLines(job, 1, 2)
	// The streams go to a server with those limits.
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = httpserver.New(e.srv.Handler(), limits)
	ts.Start()
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	e.http = ts
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := e.follow(ctx, job.ID, "")
	expectLines(t, events, 1, 2)
	var last sseEvent
	for ev := range events {
		last = ev
	}
	var resume wire.LogResume
	if last.event != "resume" || json.Unmarshal([]byte(last.data), &resume) != nil || resume.After != "1.2" {
		t.Fatalf("the stream ended with %+v, want a resume event after 1.2", last)
	}
	e.appendLines(job, 3, 3)
	expectLines(t, e.follow(ctx, job.ID, "&after="+resume.After), 3)
}
