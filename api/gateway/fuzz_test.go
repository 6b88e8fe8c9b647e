package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// fuzzJob is a fresh running job (attempt 1) of the fuzz env's runner, for
// one fuzz input, with t failing the test.
func fuzzJob(t *testing.T, e *env, r runner, n *int) (*env, store.Job) {
	te := *e
	te.tb = t
	*n++
	queued := te.enqueue(r, fmt.Sprintf("fuzz-%d", *n))
	// Claimed in the store: the claim's long poll is not what is fuzzed.
	got, err := te.s.ClaimJob(context.Background(), r.ID, time.Minute, store.Claimant{})
	if err != nil || got == nil || got.ID != queued.ID {
		t.Fatalf("claimed %v (%v), want the job just queued, %s", got, err, queued.ID)
	}
	return &te, queued
}

// fuzzConfig logs the gateway's errors to stderr: a fuzz function may not
// log through its F.
func fuzzConfig() gateway.Config {
	return gateway.Config{Intervals: short, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
}

// checkRefusal: a 4xx is a protocol.Error with a code and a message (a 400
// about a JSON value names the field), never a 5xx.
func checkRefusal(t *testing.T, rep reply, body []byte) {
	if rep.status >= 500 || rep.status < 400 {
		t.Fatalf("%q: status %d: %s", body, rep.status, rep.body)
	}
	var pe protocol.Error
	if err := json.Unmarshal(rep.body, &pe); err != nil || pe.Code == "" || pe.Message == "" {
		t.Fatalf("%q: %d %s is no protocol.Error with a code and a message", body, rep.status, rep.body)
	}
	if rep.status == http.StatusBadRequest && json.Valid(body) && pe.Field == "" {
		t.Fatalf("%q is one JSON value, refused without naming a field: %s", body, rep.body)
	}
}

// FuzzLogs posts any body as a running job's log batch, to the gateway
// served over HTTP on real PostgreSQL. The answer is 200 or a 4xx
// protocol.Error, never a 5xx. On 200 the job's stored chunks are exactly
// those of the batch (the time to PostgreSQL's microsecond) and the ack is
// the last seq; on a 4xx nothing is stored.
func FuzzLogs(f *testing.F) {
	e := newEnv(f, fuzzConfig())
	r := e.newRunner("fuzz")
	at := time.Date(2026, 11, 26, 10, 0, 0, 123456789, time.UTC)
	for _, req := range []protocol.LogsRequest{
		{Attempt: 1, Chunks: []protocol.LogChunk{
			{Seq: 1, Stream: protocol.StreamSystem, Data: "terraform plan (workspace ins_1.component.database)\n", Time: at},
			{Seq: 2, Stream: protocol.StreamStdout, Data: "\x1b[0m\x1b[1mterraform_data.database: Creating...\x1b[0m\n", Time: at.Add(time.Millisecond)},
			{Seq: 3, Stream: protocol.StreamStderr, Data: "Error: Invalid value for variable\n  on main.tf line 4:\n", Time: at.Add(time.Second)},
		}},
		{Attempt: 1, Chunks: []protocol.LogChunk{{Seq: 7, Stream: protocol.StreamStdout, Data: "Release \"web\" has been upgraded. Happy Helming!\n", Time: at}}},
		{Attempt: 1},
		{Attempt: 2, Chunks: []protocol.LogChunk{{Seq: 1, Stream: protocol.StreamStdout, Data: "x", Time: at}}},
	} {
		data, err := json.Marshal(req)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"attempt":1,"chunks":[{"seq":1,"stream":"stdout","data":"caf\u00e9 \ud83d\ude00","time":"2026-11-26T10:00:00+01:00"}]}`))
	n := 0
	f.Fuzz(func(t *testing.T, body []byte) {
		e, job := fuzzJob(t, e, r, &n)
		rep := e.post(context.Background(), r.Token, jobPath(protocol.PathJobLogs, job.ID), body)
		stored, err := e.s.ListLogs(context.Background(), job.ID, store.LogCursor{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if rep.status != http.StatusOK {
			checkRefusal(t, rep, body)
			if len(stored) != 0 {
				t.Fatalf("%q: refused with %d %s, yet %d chunks are stored", body, rep.status, rep.body, len(stored))
			}
			return
		}
		var sent protocol.LogsRequest
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatalf("%q was accepted, but is no LogsRequest: %v", body, err)
		}
		var ack protocol.LogsResponse
		rep.decode(t, http.StatusOK, &ack)
		checkStoredChunks(t, body, sent.Chunks, stored, ack.AckedSeq)
	})
}

// checkStoredChunks: stored are the chunks sent, and ack the last seq.
func checkStoredChunks(t *testing.T, body []byte, sent []protocol.LogChunk, stored []store.JobLogChunk, ack int64) {
	if len(stored) != len(sent) {
		t.Fatalf("%q: %d chunks sent, %d stored", body, len(sent), len(stored))
	}
	if want := int64(0); len(sent) > 0 && ack != sent[len(sent)-1].Seq || len(sent) == 0 && ack != want {
		t.Fatalf("%q: acked %d", body, ack)
	}
	for i, c := range sent {
		s := stored[i]
		d := s.Time.Sub(c.Time)
		if s.Attempt != 1 || s.Seq != c.Seq || s.Stream != c.Stream || s.Data != c.Data || d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("%q: chunk %d sent %+v, stored %+v", body, i, c, s)
		}
	}
}

// FuzzComplete posts any body as a running job's completion, to the
// gateway served over HTTP on real PostgreSQL. The answer is 200 or a 4xx
// protocol.Error, never a 5xx; a 4xx changes nothing. On 200 the job ended
// as sent (status, exit code, outputs, error), and sending the same body
// again answers 200 and changes nothing more.
func FuzzComplete(f *testing.F) {
	e := newEnv(f, fuzzConfig())
	r := e.newRunner("fuzz")
	code := 1
	for _, req := range []protocol.CompleteRequest{
		{Attempt: 1, Status: protocol.StatusSucceeded, ExitCode: new(int), LastSeq: 12,
			Outputs: json.RawMessage(`{"has_changes":true,"plan_text":"+ terraform_data.database","add":1,"change":0,"destroy":0}`)},
		{Attempt: 1, Status: protocol.StatusFailed, ExitCode: &code, Error: "exited with code 1", LastSeq: 3},
		{Attempt: 1, Status: protocol.StatusCancelled, Error: "cancelled: the operation was cancelled"},
		{Attempt: 2, Status: protocol.StatusSucceeded},
	} {
		data, err := json.Marshal(req)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"attempt":1,"status":"succeeded","outputs":{"exit_code":0,"output":"NAME  READY\n"}}`))
	n := 0
	f.Fuzz(func(t *testing.T, body []byte) {
		e, job := fuzzJob(t, e, r, &n)
		path := jobPath(protocol.PathJobComplete, job.ID)
		before := e.snapshot(job.ID)
		rep := e.post(context.Background(), r.Token, path, body)
		if rep.status != http.StatusOK {
			checkRefusal(t, rep, body)
			if after := e.snapshot(job.ID); after != before {
				t.Fatalf("%q: refused with %d %s, yet the job changed:\n%s\n---\n%s", body, rep.status, rep.body, before, after)
			}
			return
		}
		var sent protocol.CompleteRequest
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatalf("%q was accepted, but is no CompleteRequest: %v", body, err)
		}
		j, err := e.s.GetJobByID(context.Background(), job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(j.Status) != sent.Status || j.Outputs != string(sent.Outputs) || j.Error != sent.Error || !sameExitCode(j.ExitCode, sent.ExitCode) {
			t.Fatalf("%q: the job is %s exit %v outputs %q error %q", body, j.Status, j.ExitCode, j.Outputs, j.Error)
		}
		done := e.snapshot(job.ID)
		if again := e.post(context.Background(), r.Token, path, body); again.status != http.StatusOK {
			t.Fatalf("%q: sent again: %d %s, want 200", body, again.status, again.body)
		}
		if after := e.snapshot(job.ID); after != done {
			t.Fatalf("%q: sent again, the job changed:\n%s\n---\n%s", body, done, after)
		}
	})
}

func sameExitCode(a, b *int) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
