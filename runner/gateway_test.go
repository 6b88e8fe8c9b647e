package runner

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// testGateway is a small stand-in for the control plane's gateway, served
// over real HTTP: just enough of /runner/v1 to drive the runner from tests.
// It stores each log chunk once by seq (as the real one does) and fails the
// test on a gap.
type testGateway struct {
	t                 *testing.T
	registrationToken string
	runnerToken       string
	intervals         protocol.Intervals

	mu             sync.Mutex
	changed        chan struct{} // closed and replaced at every change
	queue          []protocol.Job
	logs           map[string][]protocol.LogChunk
	completions    map[string][]protocol.CompleteRequest
	cancelled      map[string]bool
	inputs         map[string]json.RawMessage // deferred inputs given, by job
	wantedInputs   map[string]int             // heartbeats that asked for inputs, by job
	gone           map[string]bool            // attempts no longer current
	registrations  int
	claims         int
	polling        int  // claims being held
	revoked        bool // the runner token is refused from now on
	heartbeatsDown bool // job heartbeats answer 503
	failNext       int  // the next job calls (heartbeat, logs, complete) answer 503
	// goneOnComplete makes a completed attempt no longer current, as the
	// real gateway does, and answers the completion only once a held
	// heartbeat has been told so (the order the real one may answer in).
	goneOnComplete bool
	staleAnswers   map[string]int                          // job calls answered "no longer current", by job
	onLog          func(jobID string, c protocol.LogChunk) // called with mu held
	updates        []protocol.RunnerUpdateReport           // reported by runner heartbeats
	heartbeat      protocol.RunnerHeartbeatRequest         // the last runner heartbeat
	heartbeats     int                                     // runner heartbeats received
	// onEndRound is called, with mu held, when a heartbeat ends a claim round.
	onEndRound func(round string)
	onTrial    bool // heartbeats that ask are told the runner is on trial (HealthCheck)
}

func newTestGateway(t *testing.T) *testGateway {
	return &testGateway{
		t:                 t,
		registrationToken: protocol.RegistrationTokenPrefix + "registration-secret",
		runnerToken:       protocol.RunnerTokenPrefix + "runner-secret",
		intervals: protocol.Intervals{
			ClaimWaitMS:       300,
			JobHeartbeatMS:    200,
			LeaseMS:           10_000,
			RunnerHeartbeatMS: 200,
		},
		changed:      make(chan struct{}),
		logs:         map[string][]protocol.LogChunk{},
		completions:  map[string][]protocol.CompleteRequest{},
		cancelled:    map[string]bool{},
		gone:         map[string]bool{},
		inputs:       map[string]json.RawMessage{},
		wantedInputs: map[string]int{},
		staleAnswers: map[string]int{},
	}
}

// start serves the gateway until the test ends and returns its URL.
func (g *testGateway) start() string {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+protocol.PathRegister, g.register)
	mux.HandleFunc("POST "+protocol.PathRunnerHeartbeat, g.authed(g.runnerHeartbeat))
	mux.HandleFunc("POST "+protocol.PathClaim, g.authed(g.claim))
	mux.HandleFunc("POST "+protocol.PathJobHeartbeat, g.authed(jobHandler(g, g.jobHeartbeat)))
	mux.HandleFunc("POST "+protocol.PathJobLogs, g.authed(jobHandler(g, g.jobLogs)))
	mux.HandleFunc("POST "+protocol.PathJobComplete, g.authed(jobHandler(g, g.jobComplete)))
	srv := httptest.NewServer(mux)
	g.t.Cleanup(srv.Close)
	return srv.URL
}

// update changes the gateway's state under its lock and wakes its waiters.
func (g *testGateway) update(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f()
	g.broadcast()
}

func (g *testGateway) broadcast() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// waitFor waits until cond (called with the lock held) holds. The deadline
// only keeps a broken test from hanging.
func (g *testGateway) waitFor(what string, cond func() bool) {
	g.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		g.mu.Lock()
		ok, changed := cond(), g.changed
		g.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			g.t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// hold waits, with the lock held on entry and on return, until cond holds,
// d passes or the request ends; it reports whether cond held.
func (g *testGateway) hold(r *http.Request, d time.Duration, cond func() bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for !cond() {
		changed := g.changed
		g.mu.Unlock()
		select {
		case <-changed:
			g.mu.Lock()
		case <-timer.C:
			g.mu.Lock()
			return cond()
		case <-r.Context().Done():
			g.mu.Lock()
			return cond()
		}
	}
	return true
}

func (g *testGateway) authed(h func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		ok := !g.revoked && r.Header.Get("Authorization") == "Bearer "+g.runnerToken
		g.mu.Unlock()
		if !ok {
			writeJSON(w, http.StatusUnauthorized, protocol.Error{Code: protocol.CodeUnauthorized, Message: "invalid runner token"})
			return
		}
		h(w, r)
	}
}

func (g *testGateway) register(w http.ResponseWriter, r *http.Request) {
	var req protocol.RegisterRequest
	decode(g.t, r, &req)
	g.mu.Lock()
	defer g.mu.Unlock()
	if req.RegistrationToken != g.registrationToken {
		writeJSON(w, http.StatusUnauthorized, protocol.Error{Code: protocol.CodeUnauthorized, Message: "invalid registration token"})
		return
	}
	g.registrations++
	writeJSON(w, http.StatusOK, protocol.RegisterResponse{RunnerID: "runner-1", Token: g.runnerToken, Intervals: g.intervals})
}

func (g *testGateway) runnerHeartbeat(w http.ResponseWriter, r *http.Request) {
	var req protocol.RunnerHeartbeatRequest
	decode(g.t, r, &req)
	g.update(func() { g.heartbeat, g.heartbeats = req, g.heartbeats+1 })
	if req.Update != nil {
		g.update(func() { g.updates = append(g.updates, *req.Update) })
	}
	if req.EndRound != "" && g.onEndRound != nil {
		g.update(func() { g.onEndRound(req.EndRound) })
	}
	g.mu.Lock()
	trial := req.AskHealthCheck && g.onTrial
	g.mu.Unlock()
	writeJSON(w, http.StatusOK, protocol.RunnerHeartbeatResponse{RunnerID: "runner-1", Intervals: g.intervals, HealthCheck: trial})
}

func (g *testGateway) claim(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.claims++
	g.polling++
	g.broadcast()
	defer func() {
		g.polling--
		g.broadcast()
	}()
	var req protocol.ClaimRequest
	decode(g.t, r, &req)
	// The first job it can run: one with deferred inputs only for a runner
	// that says it takes them.
	next := func() int {
		for i, j := range g.queue {
			if (req.OnlyType == "" || j.Type == req.OnlyType) &&
				(!j.InputsDeferred || slices.Contains(req.Capabilities, protocol.CapabilityDeferredInputs)) {
				return i
			}
		}
		return -1
	}
	// A job is not handed to a runner that has gone away.
	if !g.hold(r, g.intervals.ClaimWait(), func() bool { return next() >= 0 && r.Context().Err() == nil }) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	i := next()
	job := g.queue[i]
	g.queue = slices.Delete(g.queue, i, i+1)
	job.LeaseExpiresAt = time.Now().Add(g.intervals.Lease())
	writeJSON(w, http.StatusOK, job)
}

// jobHandler serves a call about a job: it decodes the request and, unless
// the attempt is gone or an outage is on, calls h with the gateway locked.
func jobHandler[Req any](g *testGateway, h func(w http.ResponseWriter, r *http.Request, id string, req Req)) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		decode(g.t, r, &req)
		id := r.PathValue("id")
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.refused(w, id) {
			h(w, r, id, req)
		}
	}
}

// refused answers a job call that cannot go on: a stale attempt, or an
// outage. It reports whether it answered.
func (g *testGateway) refused(w http.ResponseWriter, id string) bool {
	switch {
	case g.gone[id]:
		writeJSON(w, http.StatusConflict, protocol.Error{Code: protocol.CodeStaleAttempt, Message: "attempt is no longer current"})
		g.staleAnswers[id]++
		g.broadcast()
	case g.failNext > 0:
		g.failNext--
		writeJSON(w, http.StatusServiceUnavailable, protocol.Error{Code: "unavailable", Message: "try again"})
	default:
		return false
	}
	return true
}

func (g *testGateway) jobHeartbeat(w http.ResponseWriter, r *http.Request, id string, req protocol.JobHeartbeatRequest) {
	if g.heartbeatsDown {
		writeJSON(w, http.StatusServiceUnavailable, protocol.Error{Code: "unavailable", Message: "down"})
		return
	}
	wait := time.Duration(req.WaitMS) * time.Millisecond
	if req.WantInputs {
		g.wantedInputs[id]++
	}
	g.hold(r, wait, func() bool { return g.cancelled[id] || g.gone[id] || (req.WantInputs && g.inputs[id] != nil) })
	if g.refused(w, id) {
		return
	}
	resp := protocol.JobHeartbeatResponse{
		LeaseExpiresAt:  time.Now().Add(g.intervals.Lease()),
		CancelRequested: g.cancelled[id],
	}
	if req.WantInputs {
		resp.Inputs = g.inputs[id]
	}
	writeJSON(w, http.StatusOK, resp)
}

func (g *testGateway) jobLogs(w http.ResponseWriter, _ *http.Request, id string, req protocol.LogsRequest) {
	if len(req.Chunks) > protocol.MaxLogBatchChunks {
		g.t.Errorf("a batch of %d chunks, more than %d", len(req.Chunks), protocol.MaxLogBatchChunks)
	}
	for _, c := range req.Chunks {
		stored := int64(len(g.logs[id]))
		switch {
		case c.Seq <= stored: // a resend
		case c.Seq == stored+1:
			g.logs[id] = append(g.logs[id], c)
			if g.onLog != nil {
				g.onLog(id, c)
			}
		default:
			g.t.Errorf("job %s: chunk seq %d after %d: a gap", id, c.Seq, stored)
		}
	}
	g.broadcast()
	writeJSON(w, http.StatusOK, protocol.LogsResponse{AckedSeq: int64(len(g.logs[id]))})
}

func (g *testGateway) jobComplete(w http.ResponseWriter, r *http.Request, id string, req protocol.CompleteRequest) {
	g.completions[id] = append(g.completions[id], req)
	g.broadcast()
	if g.goneOnComplete {
		g.gone[id] = true
		g.broadcast()
		g.hold(r, 5*time.Second, func() bool { return g.staleAnswers[id] > 0 })
		// Give the runner the time to act on that answer (an order of
		// events, not a timing assertion).
		g.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
		g.mu.Lock()
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// completion returns the job's one completion.
func (g *testGateway) completion(id string) protocol.CompleteRequest {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.completions[id]); n != 1 {
		g.t.Fatalf("job %s: %d completions, want 1", id, n)
	}
	return g.completions[id][0]
}

// lines returns the data of the job's chunks of one stream, in seq order.
func (g *testGateway) lines(id, stream string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var lines []string
	for _, c := range g.logs[id] {
		if c.Stream == stream {
			lines = append(lines, c.Data)
		}
	}
	return lines
}

// logged reports whether a chunk of the job's log contains text.
func (g *testGateway) logged(id, stream, text string) bool {
	for _, l := range g.lines(id, stream) {
		if strings.Contains(l, text) {
			return true
		}
	}
	return false
}

func decode(t *testing.T, r *http.Request, v any) {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Errorf("%s: decoding the request: %v", r.URL.Path, err)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// claimCount is how many claims the runner made.
func (g *testGateway) claimCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.claims
}
