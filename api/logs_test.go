package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/outpost-dev/outpost/api/wire"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// runningJob queues a job for the install's runner and claims it, as the
// runner would through the gateway.
func (e *testEnv) runningJob(inst installAnswer, key string) store.Job {
	e.t.Helper()
	job := e.enqueueJob(inst, key)
	claimed, err := e.store.ClaimJob(context.Background(), inst.Runner.ID, time.Minute, store.Claimant{DeferredInputs: true})
	if err != nil || claimed == nil || claimed.ID != job.ID {
		e.t.Fatalf("claim %s: %+v %v", job.ID, claimed, err)
	}
	return *claimed
}

// appendLines stores log chunks from..to of attempt 1, data "line <seq>".
func (e *testEnv) appendLines(job store.Job, from, to int64) {
	e.t.Helper()
	var chunks []protocol.LogChunk
	for seq := from; seq <= to; seq++ {
		chunks = append(chunks, protocol.LogChunk{Seq: seq, Stream: protocol.StreamStdout, Data: fmt.Sprintf("line %d", seq), Time: time.Now()})
	}
	if _, err := e.store.AppendLogs(context.Background(), job.RunnerID, job.ID, 1, chunks, 0); err != nil {
		e.t.Fatal(err)
	}
}

// completeJob completes attempt 1 the way the runner does, saying it wrote
// lastSeq lines.
func (e *testEnv) completeJob(job store.Job, status string, lastSeq int64) {
	e.t.Helper()
	exit := 0
	if status != protocol.StatusSucceeded {
		exit = 2
	}
	if err := e.store.CompleteJob(context.Background(), job.RunnerID, job.ID, protocol.CompleteRequest{Attempt: 1,
		Status: status, ExitCode: &exit, LastSeq: lastSeq}); err != nil {
		e.t.Fatal(err)
	}
}

func TestJobsAndLogPages(t *testing.T) {
	e := newTestEnv(t)
	_, inst := e.fixture()
	job := e.runningJob(inst, "wf/pages")
	e.appendLines(job, 1, 3)

	var jobs struct{ Jobs []store.Job }
	e.call("GET", "/v1/installs/"+inst.ID+"/jobs", nil, 200, &jobs)
	if len(jobs.Jobs) != 1 || jobs.Jobs[0].ID != job.ID || jobs.Jobs[0].Status != status.JobRunning {
		t.Fatalf("install jobs = %+v", jobs.Jobs)
	}

	var detail map[string]any
	res := e.call("GET", "/v1/jobs/"+job.ID, nil, 200, &detail)
	if _, ok := detail["manifest"]; ok || strings.Contains(string(res.body), "secret-manifest-value") {
		t.Fatalf("the job shows its manifest: %s", res.body)
	}
	var history struct {
		Status   status.Job
		Attempts []store.JobAttempt
		History  []store.JobEvent
	}
	json.Unmarshal(res.body, &history)
	if history.Status != status.JobRunning || len(history.Attempts) != 1 || history.Attempts[0].RunnerID != inst.Runner.ID ||
		len(history.History) != 2 || history.History[0].Status != status.JobQueued || history.History[1].Status != status.JobRunning {
		t.Fatalf("job detail = %s", res.body)
	}

	pages := []struct {
		query      string
		want       []string
		nextCursor string
	}{
		{"", []string{"line 1", "line 2", "line 3"}, "1.3"},
		{"?limit=2", []string{"line 1", "line 2"}, "1.2"},
		{"?after=1.2", []string{"line 3"}, "1.3"},
		{"?after=1.3", nil, "1.3"},
		{"?after=0.0&limit=1", []string{"line 1"}, "1.1"},
	}
	for _, p := range pages {
		var page wire.LogPage
		e.call("GET", "/v1/jobs/"+job.ID+"/logs"+p.query, nil, 200, &page)
		var got []string
		for _, c := range page.Chunks {
			if c.Attempt != 1 || c.Stream != protocol.StreamStdout || c.Time.IsZero() {
				t.Fatalf("logs%s: chunk %+v", p.query, c)
			}
			got = append(got, c.Data)
		}
		if strings.Join(got, "|") != strings.Join(p.want, "|") || page.NextCursor != p.nextCursor || page.Chunks == nil {
			t.Fatalf("logs%s: chunks %q next %q, want %q next %q", p.query, got, page.NextCursor, p.want, p.nextCursor)
		}
	}
}

// awaitFollower returns once a log follower waits having seen the job in
// status and sent the logs up to sent.
func (e *testEnv) awaitFollower(want status.Job, sent store.LogCursor) {
	e.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case st := <-e.followIdle:
			if st.status == want && st.sent == sent {
				return
			}
		case <-timeout:
			e.t.Fatalf("no log follower waits with the job %s and lines up to %v sent", want, sent)
		}
	}
}

type sseEvent struct{ event, id, data string }

// follow opens a log stream and returns its events; the channel closes when
// the stream ends.
func (e *testEnv) follow(ctx context.Context, jobID, query string) <-chan sseEvent {
	e.t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", e.http.URL+"/v1/jobs/"+jobID+"/logs?follow=true"+query, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		body, _ := io.ReadAll(res.Body)
		e.t.Fatalf("follow: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	events := make(chan sseEvent, 100)
	go func() {
		defer close(events)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"): // comment
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return events
}

// expectLines reads log events and checks they carry exactly the given seqs.
func expectLines(t *testing.T, events <-chan sseEvent, seqs ...int64) {
	t.Helper()
	for _, seq := range seqs {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended before line %d", seq)
			}
			var chunk store.JobLogChunk
			if ev.event != "log" || json.Unmarshal([]byte(ev.data), &chunk) != nil {
				t.Fatalf("got event %+v, want line %d", ev, seq)
			}
			if chunk.Seq != seq || chunk.Data != fmt.Sprintf("line %d", seq) || ev.id != fmt.Sprintf("1.%d", seq) {
				t.Fatalf("got %+v (id %s), want line %d", chunk, ev.id, seq)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no line %d within 20s", seq)
		}
	}
}

// expectEnd reads the end event and then the end of the stream.
func expectEnd(t *testing.T, events <-chan sseEvent, want status.Job) {
	t.Helper()
	select {
	case ev := <-events:
		var end wire.LogEnd
		if ev.event != "end" || json.Unmarshal([]byte(ev.data), &end) != nil || end.Status != string(want) {
			t.Fatalf("got %+v, want the end event with status %s", ev, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no end event within 20s")
	}
	select {
	case ev, ok := <-events:
		if ok {
			t.Fatalf("event %+v after the end", ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stream stayed open after the end event")
	}
}

func TestFollowLogsStreamsNewLinesUntilTheJobEnds(t *testing.T) {
	e := newTestEnv(t)
	_, inst := e.fixture()
	job := e.runningJob(inst, "wf/follow")
	e.appendLines(job, 1, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	events := e.follow(ctx, job.ID, "")
	expectLines(t, events, 1, 2) // stored before the request
	e.appendLines(job, 3, 4)     // after it started
	expectLines(t, events, 3, 4)
	e.appendLines(job, 5, 5)
	expectLines(t, events, 5)

	// The runner completes, saying it wrote 6 lines; the sixth arrives after
	// the follower saw the completion, and is still sent before the end.
	e.completeJob(job, protocol.StatusSucceeded, 6)
	e.awaitFollower(status.JobSucceeded, store.LogCursor{Attempt: 1, Seq: 5})
	e.appendLines(job, 6, 6)
	expectLines(t, events, 6)
	expectEnd(t, events, status.JobSucceeded)
}

func TestFollowLogsOfAFinishedJob(t *testing.T) {
	e := newTestEnv(t)
	_, inst := e.fixture()
	job := e.runningJob(inst, "wf/finished")
	e.appendLines(job, 1, 3)
	e.completeJob(job, protocol.StatusFailed, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := e.follow(ctx, job.ID, "&after=1.1")
	expectLines(t, events, 2, 3)
	expectEnd(t, events, status.JobFailed)
}

func TestFollowLogsStopsWhenTheClientGoesAway(t *testing.T) {
	e := newTestEnv(t)
	_, inst := e.fixture()
	job := e.runningJob(inst, "wf/away")
	ctx, cancel := context.WithCancel(context.Background())
	events := e.follow(ctx, job.ID, "")
	e.awaitFollower(status.JobRunning, store.LogCursor{})
	cancel()
	for range events { // until the client has closed its side
	}
	// Close waits for every request in flight: it returns only if the
	// follower noticed its client left.
	closed := make(chan struct{})
	go func() {
		e.http.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("the log follower kept running after its client went away")
	}
}
