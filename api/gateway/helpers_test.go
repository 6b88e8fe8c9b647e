package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// env is a gateway served over real HTTP on loopback, backed by a fresh
// PostgreSQL store, with every SQL statement it runs counted.
type env struct {
	tb     testing.TB
	s      *store.Store
	g      *gateway.Gateway
	srv    *httptest.Server // nil when the gateway is a process of its own
	url    string           // the gateway's base URL
	client *http.Client
	sql    *sqlCounter
	org    store.Org
	app    store.App
}

// newEnv starts a gateway configured by cfg (Store and Logger are filled in).
// Everything stops when the test ends.
func newEnv(tb testing.TB, cfg gateway.Config) *env {
	tb.Helper()
	ctx := context.Background()
	s := storetest.Open(tb, store.Postgres)
	// Callbacks must be registered before the store is used concurrently.
	counter := countStatements(tb, s.DB())
	org, _, app := storetest.NewOrgApp(tb, s, "acme")
	cfg.Store = s
	if cfg.AuthLimiter == nil {
		cfg.AuthLimiter = unlimited() // tests of other things fail authentication often, all from loopback
	}
	if cfg.Logger == nil {
		var w io.Writer = testWriter{tb}
		if _, ok := tb.(*testing.B); ok {
			w = os.Stderr // a benchmark's log is cut short; keep its summary lines visible
		}
		cfg.Logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	g := gateway.New(cfg)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); g.Run(runCtx) }()
	srv := httptest.NewServer(g.Handler())
	tr := newTransport()
	tb.Cleanup(func() {
		// Long polls would keep Close waiting: cut every connection first.
		srv.CloseClientConnections()
		srv.Close()
		tr.CloseIdleConnections()
		stop()
		<-done
	})
	return &env{tb: tb, s: s, g: g, srv: srv, url: srv.URL, client: &http.Client{Transport: tr}, sql: counter, org: org, app: app}
}

// replica is another gateway on e's store (as a second API process would be), served over HTTP:
// the returned env sends its requests there.
func (e *env) replica(cfg gateway.Config) *env {
	e.tb.Helper()
	cfg.Store, cfg.AuthLimiter = e.s, unlimited()
	cfg.Logger = slog.New(slog.NewTextHandler(testWriter{e.tb}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	g := gateway.New(cfg)
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); g.Run(runCtx) }()
	srv := httptest.NewServer(g.Handler())
	e.tb.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		stop()
		<-done
	})
	o := *e
	o.g, o.srv, o.url = g, srv, srv.URL
	return &o
}

// newTransport is the simulated runners' HTTP client side: one connection
// per runner, idle or busy, however many runners there are.
func newTransport() *http.Transport {
	return &http.Transport{
		MaxIdleConns:        0, // no limit
		MaxIdleConnsPerHost: 1 << 16,
		MaxConnsPerHost:     0, // no limit
		IdleConnTimeout:     90 * time.Second,
	}
}

// unlimited is a limiter of failed authentications that never refuses.
func unlimited() *authlimit.Limiter { return authlimit.New(authlimit.Config{Burst: 1 << 30}) }

// testWriter sends the gateway's warnings to the test log.
type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// runner is a registered install runner.
type runner struct {
	ID        string
	InstallID string
	Token     string
	Intervals protocol.Intervals
}

// newInstall creates an install (and its runner) and returns the install,
// the runner and the one-time registration token.
func (e *env) newInstall(name string) (store.Install, store.Runner, string) {
	e.tb.Helper()
	inst, r, reg, err := e.s.CreateInstall(context.Background(), e.org.ID, e.app.ID, name, nil)
	if err != nil {
		e.tb.Fatal(err)
	}
	return inst, r, reg
}

// newRunner creates an install and registers its runner over HTTP.
func (e *env) newRunner(name string) runner {
	e.tb.Helper()
	r, err := e.tryNewRunner(name)
	if err != nil {
		e.tb.Fatal(err)
	}
	return r
}

// tryNewRunner is newRunner for any goroutine.
func (e *env) tryNewRunner(name string) (runner, error) {
	inst, _, reg, err := e.s.CreateInstall(context.Background(), e.org.ID, e.app.ID, name, nil)
	if err != nil {
		return runner{}, err
	}
	rep, err := e.tryPost(context.Background(), "", protocol.PathRegister, protocol.RegisterRequest{RegistrationToken: reg, Name: name, Version: "test"})
	if err != nil {
		return runner{}, err
	}
	if rep.status != http.StatusOK {
		return runner{}, fmt.Errorf("register: status %d: %s", rep.status, rep.body)
	}
	var out protocol.RegisterResponse
	if err := json.Unmarshal(rep.body, &out); err != nil {
		return runner{}, err
	}
	return runner{ID: out.RunnerID, InstallID: inst.ID, Token: out.Token, Intervals: out.Intervals}, nil
}

// enqueue queues a noop job for r.
func (e *env) enqueue(r runner, key string) store.Job {
	e.tb.Helper()
	j, _, err := e.s.EnqueueJob(context.Background(), e.spec(r, key))
	if err != nil {
		e.tb.Fatal(err)
	}
	return j
}

func (e *env) spec(r runner, key string) store.JobSpec {
	inst := r.InstallID
	return store.JobSpec{Key: key, OrgID: e.org.ID, RunnerID: r.ID, InstallID: &inst, Type: protocol.JobTypeNoop,
		Manifest: json.RawMessage(`{"sleep_ms":1,"lines":["hello"]}`), TimeoutMS: 60_000}
}

// reply is an HTTP answer.
type reply struct {
	status int
	body   []byte
}

// post sends body (a string or []byte is sent as is, anything else as JSON)
// with the runner token tok ("" sends no Authorization header).
func (e *env) post(ctx context.Context, tok, path string, body any) reply {
	e.tb.Helper()
	rep, err := e.tryPost(ctx, tok, path, body)
	if err != nil {
		e.tb.Fatalf("POST %s: %v", path, err)
	}
	return rep
}

func (e *env) tryPost(ctx context.Context, tok, path string, body any) (reply, error) {
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	case nil:
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return reply{}, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+path, bytes.NewReader(raw))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: resp.StatusCode, body: data}, nil
}

// decode checks the status and decodes the body into v.
func (r reply) decode(tb testing.TB, status int, v any) {
	tb.Helper()
	if r.status != status {
		tb.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		tb.Fatalf("decode %s: %v", r.body, err)
	}
}

// wantError checks the answer is a protocol.Error with this status, code and
// field.
func (r reply) wantError(tb testing.TB, status int, code, field string) protocol.Error {
	tb.Helper()
	var pe protocol.Error
	if r.status != status {
		tb.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pe); err != nil {
		tb.Fatalf("body %q is not a protocol.Error: %v", r.body, err)
	}
	if pe.Code != code || pe.Field != field {
		tb.Fatalf("error code %q field %q, want code %q field %q (message %q)", pe.Code, pe.Field, code, field, pe.Message)
	}
	if pe.Message == "" {
		tb.Fatalf("error %+v has no message", pe)
	}
	return pe
}

func jobPath(pattern, jobID string) string { return strings.Replace(pattern, "{id}", jobID, 1) }

// claim makes one long poll and returns the job, or nil on 204.
func (e *env) claim(ctx context.Context, tok string) (*protocol.Job, error) {
	return e.claimAs(ctx, tok, protocol.ClaimRequest{})
}

// claimAs is claim, with the runner's capabilities in the request.
func (e *env) claimAs(ctx context.Context, tok string, req protocol.ClaimRequest) (*protocol.Job, error) {
	rep, err := e.tryPost(ctx, tok, protocol.PathClaim, req)
	if err != nil {
		return nil, err
	}
	switch rep.status {
	case http.StatusNoContent:
		if len(rep.body) != 0 {
			return nil, fmt.Errorf("204 with a body %q", rep.body)
		}
		return nil, nil
	case http.StatusOK:
		var j protocol.Job
		if err := json.Unmarshal(rep.body, &j); err != nil {
			return nil, fmt.Errorf("decode job %s: %w", rep.body, err)
		}
		return &j, nil
	}
	return nil, fmt.Errorf("claim: status %d: %s", rep.status, rep.body)
}

// enqueueDeferred queues a job for the runner with deferred inputs (waited
// for 90 s at most).
func (e *env) enqueueDeferred(r runner, key string) store.Job {
	e.tb.Helper()
	spec := e.spec(r, key)
	spec.InputsDeferred, spec.InputsWaitMS = true, 90_000
	j, _, err := e.s.EnqueueJob(context.Background(), spec)
	if err != nil {
		e.tb.Fatal(err)
	}
	return j
}

// claimResult is what a claim made in the background answered.
type claimResult struct {
	job *protocol.Job
	err error
}

// claimInBackground claims in a goroutine: one poll when once, else polls
// as a runner does until one answers with a job or fails.
func (e *env) claimInBackground(ctx context.Context, tok string, once bool) <-chan claimResult {
	got := make(chan claimResult, 1)
	go func() {
		for {
			j, err := e.claim(ctx, tok)
			if once || err != nil || j != nil {
				got <- claimResult{j, err}
				return
			}
		}
	}()
	return got
}

// mustClaim claims and fails the test unless a job comes back.
func (e *env) mustClaim(r runner) protocol.Job {
	e.tb.Helper()
	j, err := e.claim(context.Background(), r.Token)
	if err != nil {
		e.tb.Fatal(err)
	}
	if j == nil {
		e.tb.Fatal("claim answered 204, want a job")
	}
	return *j
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline (a wait for a state, not a timing assertion).
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// snapshot is everything stored about a job, as text: the row, its
// attempts, its history and its logs.
func (e *env) snapshot(jobID string) string {
	e.tb.Helper()
	var parts []string
	for _, q := range []string{
		`SELECT row_to_json(j)::text FROM jobs j WHERE id = ?`,
		`SELECT coalesce(json_agg(a ORDER BY attempt)::text, '[]') FROM job_attempts a WHERE job_id = ?`,
		`SELECT coalesce(json_agg(v ORDER BY id)::text, '[]') FROM job_events v WHERE job_id = ?`,
		`SELECT coalesce(json_agg(l ORDER BY attempt, seq)::text, '[]') FROM job_log_chunks l WHERE job_id = ?`,
	} {
		var s string
		if err := e.s.DB().Raw(q, jobID).Row().Scan(&s); err != nil {
			e.tb.Fatalf("snapshot %s: %v", jobID, err)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}

// Statement kinds the counter tells apart.
const (
	kindClaim  = "claim" // the claim query of one runner
	kindReap   = "reap"  // the lease reaper's scan
	kindTouch  = "touch" // the last-seen flush, one statement for all runners
	kindAuth   = "auth"  // a runner token lookup
	kindOther  = "other"
	kindFailed = "failed" // a statement that got an error (not found aside)
)

var (
	reClaim = regexp.MustCompile(`(?i)FROM\s+"?jobs"?\s+WHERE\s+runner_id\s*=.*status\s*=.*FOR UPDATE SKIP LOCKED`)
	reReap  = regexp.MustCompile(`(?i)FROM\s+"?jobs"?\s+WHERE\s+status\s*=.*lease_expires_at\s*<`)
	reTouch = regexp.MustCompile(`(?i)UPDATE\s+"?runners"?\s+SET\s+"?last_seen_at"?\s*=.*WHERE\s+"?id"?\s+IN`)
	reAuth  = regexp.MustCompile(`(?i)JOIN\s+"?runner_tokens"?`)
)

// sqlCounter counts the statements gorm sends to the database, by kind, and
// the claim queries answered for each runner. BEGIN/COMMIT (not gorm callbacks) and the
// notification bus (its own pgx pool) are not counted.
type sqlCounter struct {
	mu       sync.Mutex
	byKind   map[string]int
	byRunner map[string]int // claim queries per runner ID
}

func countStatements(tb testing.TB, db *gorm.DB) *sqlCounter {
	tb.Helper()
	c := &sqlCounter{byKind: map[string]int{}, byRunner: map[string]int{}}
	fn := func(tx *gorm.DB) {
		if tx.Statement.SQL.Len() > 0 {
			c.record(tx.Statement.SQL.String(), tx.Statement.Vars, tx.Error)
		}
	}
	if err := storetest.OnEveryStatement(db, "outpost_test:count", true, fn); err != nil {
		tb.Fatalf("register SQL counter: %v", err)
	}
	return c
}

func (c *sqlCounter) record(sql string, vars []any, err error) {
	kind := kindOther
	switch {
	case err != nil && !errors.Is(err, gorm.ErrRecordNotFound):
		kind = kindFailed
	case reClaim.MatchString(sql):
		kind = kindClaim
	case reReap.MatchString(sql):
		kind = kindReap
	case reTouch.MatchString(sql):
		kind = kindTouch
	case reAuth.MatchString(sql):
		kind = kindAuth
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byKind[kind]++
	if kind == kindClaim && len(vars) > 0 { // only those answered
		if id, ok := vars[0].(string); ok {
			c.byRunner[id]++
		}
	}
}

// counts is a copy of the counters at one moment.
type counts struct {
	byKind   map[string]int
	byRunner map[string]int
}

func (c *sqlCounter) snapshot() counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := counts{byKind: map[string]int{}, byRunner: map[string]int{}}
	for k, v := range c.byKind {
		out.byKind[k] = v
	}
	for k, v := range c.byRunner {
		out.byRunner[k] = v
	}
	return out
}

// since returns what was counted after before.
func (c counts) since(before counts) counts {
	out := counts{byKind: map[string]int{}, byRunner: map[string]int{}}
	for k, v := range c.byKind {
		if d := v - before.byKind[k]; d != 0 {
			out.byKind[k] = d
		}
	}
	for k, v := range c.byRunner {
		if d := v - before.byRunner[k]; d != 0 {
			out.byRunner[k] = d
		}
	}
	return out
}

func (c counts) total() int {
	n := 0
	for _, v := range c.byKind {
		n += v
	}
	return n
}

func (c *sqlCounter) claims(runnerID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byRunner[runnerID]
}
