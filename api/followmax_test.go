package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
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
	e.serve(limits)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := e.follow(ctx, job.ID, "")
	expectLines(t, events, 1, 2)
	expectResume(t, events, "1.2")
	e.appendLines(job, 3, 3)
	expectLines(t, e.follow(ctx, job.ID, "&after=1.2"), 3)
}

// serve serves the API with limits for the test's calls (e.http) and
// returns its http.Server.
func (e *testEnv) serve(limits httpserver.Limits) *http.Server {
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = httpserver.New(e.srv.Handler(), limits)
	ts.Start()
	e.t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	e.http = ts
	return ts.Config
}

// expectResume reads a follow stream to its end, which must be a resume
// event after cursor.
func expectResume(t *testing.T, events <-chan sseEvent, cursor string) {
	t.Helper()
	var last sseEvent
	for ev := range events {
		last = ev
	}
	var resume wire.LogResume
	if last.event != "resume" || json.Unmarshal([]byte(last.data), &resume) != nil || resume.After != cursor {
		t.Errorf("the stream ended with %+v, want a resume event after %s", last, cursor)
	}
}
