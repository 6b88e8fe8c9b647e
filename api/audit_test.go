package api

import (
	"bytes"
	"context"
	"fmt"
	"github.com/outpost-dev/outpost/api/wire"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// wantEvent is what an audit event must say; objects lists some of its
// objects (a value "*" only says the kind is there).
type wantEvent struct {
	token, via, action, method, route string
	objects                           map[string]string
	status                            int
	code                              string
}

// A sequence of real calls (a token made, an app, a config sync, an install,
// inputs with a sensitive value, a step approved, refusals of several kinds)
// is in the org's audit log in order, each with its token, action, objects
// and outcome; GETs and calls without an API token are not; no secret is in
// the table or the answer; another org sees none of it.
func TestAuditLogRecordsChangingCalls(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	var ci wire.NewToken
	e.call("POST", "/v1/tokens", map[string]any{"name": "ci"}, 201, &ci)
	eci := *e
	eci.token = ci.Token
	var app store.App
	eci.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 201, &app)
	eci.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 409, nil)
	eci.syncConfig(app.ID, exampleFiles(t), 201)
	var inst installAnswer
	eci.call("POST", "/v1/installs", map[string]any{"app_id": app.ID, "name": "customer-1"}, 201, &inst)
	const secret = "hunter2-audit-s3cret"
	eci.call("PATCH", "/v1/installs/"+inst.ID+"/inputs", map[string]any{"set": []map[string]any{
		{"name": "db_password", "value": secret, "sensitive": true}}}, 200, nil)
	op := e.waitingStep(inst.ID)
	steps := "/v1/installs/" + inst.ID + "/operations/" + op.ID + "/steps/" + status.SandboxStep
	e.call("POST", steps+"/approve", nil, 202, nil)
	if want := []string{op.WorkflowID + " sandbox true"}; !slices.Equal(e.ops.decisions, want) {
		t.Fatalf("decisions signalled: %v, want %v", e.ops.decisions, want)
	}
	e.store.UpdateStep(ctx, op.ID, status.SandboxStep, store.StepChange{Status: new(status.StepApplying)})
	e.call("POST", steps+"/deny", nil, 409, nil)
	eci.call("GET", "/v1/apps/"+app.ID, nil, 200, nil)                  // a GET: not recorded
	e.send("POST", "/v1/apps", "", map[string]any{"name": "anonymous"}) // no token: no org to record it under
	var old wire.NewToken
	e.call("POST", "/v1/tokens", map[string]any{"name": "old"}, 201, &old)
	e.call("DELETE", "/v1/tokens/"+old.ID, nil, 204, nil)
	e.callAs(old.Token, "POST", "/v1/apps", map[string]any{"name": "late"}, 401, nil)
	session := &http.Cookie{Name: SessionCookie, Value: ci.Token}
	if res := e.sendCookies("PUT", "/v1/installs/"+inst.ID+"/labels", "", `{"labels":{}}`, session); res.status != 403 {
		t.Fatalf("a forged session change: %s", res)
	}

	ins, stepObjects := map[string]string{"install_id": inst.ID}, map[string]string{"install_id": inst.ID,
		"operation_id": op.ID, "step": status.SandboxStep, "step_id": op.Steps[0].ID}
	e.checkAudit("", []wantEvent{
		{"admin", "bearer", "createToken", "POST", "/v1/tokens", map[string]string{"token_id": ci.ID, "token_name": "ci"}, 201, ""},
		{"ci", "bearer", "createApp", "POST", "/v1/apps", map[string]string{"app_id": app.ID}, 201, ""},
		{"ci", "bearer", "createApp", "POST", "/v1/apps", map[string]string{}, 409, "conflict"},
		{"ci", "bearer", "syncAppConfig", "POST", "/v1/apps/{id}/configs", map[string]string{"app_id": app.ID, "config_version": "1"}, 201, ""},
		{"ci", "bearer", "createInstall", "POST", "/v1/installs", map[string]string{"install_id": inst.ID, "runner_id": inst.Runner.ID}, 201, ""},
		{"ci", "bearer", "patchInstallInputs", "PATCH", "/v1/installs/{id}/inputs", ins, 200, ""},
		{"admin", "bearer", "approveStep", "POST", "/v1/installs/{id}/operations/{op}/steps/{step}/approve", stepObjects, 202, ""},
		{"admin", "bearer", "denyStep", "POST", "/v1/installs/{id}/operations/{op}/steps/{step}/deny", stepObjects, 409, "conflict"},
		{"admin", "bearer", "createToken", "POST", "/v1/tokens", map[string]string{"token_id": old.ID, "token_name": "old"}, 201, ""},
		{"admin", "bearer", "revokeToken", "DELETE", "/v1/tokens/{id}", map[string]string{"token_id": old.ID}, 204, ""},
		{"old", "bearer", "createApp", "POST", "/v1/apps", map[string]string{}, 401, "unauthorized"},
		{"ci", "session", "putInstallLabels", "PUT", "/v1/installs/{id}/labels", ins, 403, codeCSRF},
	})
	e.checkAudit("?action=approveStep", []wantEvent{
		{"admin", "bearer", "approveStep", "POST", "/v1/installs/{id}/operations/{op}/steps/{step}/approve", stepObjects, 202, ""}})
	e.checkAudit("?object_id="+op.Steps[0].ID+"&token_id="+e.adminTokenID(), []wantEvent{
		{"admin", "bearer", "approveStep", "POST", "/v1/installs/{id}/operations/{op}/steps/{step}/approve", stepObjects, 202, ""},
		{"admin", "bearer", "denyStep", "POST", "/v1/installs/{id}/operations/{op}/steps/{step}/deny", stepObjects, 409, "conflict"}})

	table := fmt.Sprint(e.snapshotAll()["audit_events"])
	answer := e.call("GET", "/v1/audit?limit=200", nil, 200, nil).body
	for what, value := range map[string]string{"the sensitive input": secret, "the ci token": ci.Token,
		"the old token": old.Token, "the admin token": e.token, "the registration token": inst.Runner.RegistrationToken} {
		if strings.Contains(table, value) || bytes.Contains(answer, []byte(value)) {
			t.Errorf("%s is in the audit log", what)
		}
	}
	e.checkOtherOrgSeesNothing(app.ID)
}

// waitingStep starts a provision of the install (in the store: the API's
// would start its workflow) whose sandbox step waits for approval.
func (e *testEnv) waitingStep(installID string) store.InstallOperation {
	e.t.Helper()
	ctx := context.Background()
	op, err := e.store.StartOperation(ctx, store.InstallOperation{OrgID: e.org.ID, InstallID: installID, Kind: store.OpProvision,
		ApprovalMode: status.Prompt, WorkflowID: "install/" + installID + "/provision"})
	if err == nil {
		err = e.store.AddSteps(ctx, op.ID, []store.NewStep{{Name: status.SandboxStep}})
	}
	if err == nil {
		err = e.store.UpdateStep(ctx, op.ID, status.SandboxStep, store.StepChange{Status: new(status.StepWaitingApproval)})
	}
	if err == nil {
		op, err = e.store.GetOperation(ctx, e.org.ID, op.ID)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return op
}

func (e *testEnv) adminTokenID() string {
	e.t.Helper()
	tok, err := e.store.AuthenticateAPIToken(context.Background(), e.token)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok.ID
}

// auditPages reads the org's audit log with query, every page (of 2), and
// returns it oldest first.
func (e *testEnv) auditPages(query string) []wire.AuditEvent {
	e.t.Helper()
	var all []wire.AuditEvent
	for before := ""; ; {
		q, _ := url.ParseQuery(strings.TrimPrefix(query, "?"))
		q.Set("limit", "2")
		if before != "" {
			q.Set("before", before)
		}
		var page wire.AuditEventList
		e.call("GET", "/v1/audit?"+q.Encode(), nil, 200, &page)
		all = append(all, page.Events...)
		if page.NextBefore == "" {
			break
		}
		before = page.NextBefore
	}
	slices.Reverse(all)
	return all
}

// checkAudit compares the org's audit log (with query) with want, oldest
// first.
func (e *testEnv) checkAudit(query string, want []wantEvent) {
	e.t.Helper()
	got := e.auditPages(query)
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			e.t.Errorf("audit%s: event %d missing, want %+v", query, i, want[i])
		case i >= len(want):
			e.t.Errorf("audit%s: event %d not expected: %+v", query, i, got[i])
		case !want[i].matches(got[i]):
			e.t.Errorf("audit%s: event %d = %+v\nwant %+v", query, i, got[i], want[i])
		}
	}
}

func (w wantEvent) matches(ev wire.AuditEvent) bool {
	for k, v := range w.objects {
		if got, ok := ev.Objects[k]; !ok || (v != "*" && got != v) {
			return false
		}
	}
	return ev.TokenName == w.token && ev.TokenID != "" && ev.Via == w.via && ev.Action == w.action &&
		ev.Method == w.method && ev.Route == w.route && ev.Status == w.status && ev.ErrorCode == w.code &&
		len(ev.Objects) == len(w.objects) && ev.ID != "" && !ev.At.IsZero()
}

// checkOtherOrgSeesNothing: org B lists its own calls only, finds none of
// A's by A's app ID, and cannot page from one of A's events.
func (e *testEnv) checkOtherOrgSeesNothing(appID string) {
	e.t.Helper()
	bOrg, bToken, err := e.store.CreateOrg(context.Background(), "globex")
	if err != nil {
		e.t.Fatal(err)
	}
	eb := *e
	eb.org, eb.token = bOrg, bToken
	eb.call("POST", "/v1/apps/"+appID+"/components", map[string]any{"name": "x", "type": "helm_chart"}, 404, nil)
	eb.checkAudit("", []wantEvent{{"admin", "bearer", "createComponent", "POST", "/v1/apps/{id}/components",
		map[string]string{"app_id": appID}, 404, "not_found"}})
	var page wire.AuditEventList
	eb.call("GET", "/v1/audit?object_id="+appID+"&action=createApp", nil, 200, &page)
	if len(page.Events) != 0 {
		e.t.Errorf("org B finds A's events: %+v", page.Events)
	}
	aEvents := e.auditPages("")
	res := eb.call("GET", "/v1/audit?before="+aEvents[0].ID, nil, 400, nil)
	if res.apiError(e.t).Field != "before" {
		e.t.Errorf("org B paging from A's event: %s, want 400 on before", res)
	}
	if ids := slices.Collect(maps.Keys(aEvents[0].Objects)); len(ids) == 0 {
		e.t.Errorf("A's first event names no object: %+v", aEvents[0])
	}
}

// When its audit event cannot be written (here: the table is gone), a call
// is answered as it would have been and the event is logged as an error,
// with its objects, never the request's body or token.
func TestAuditWriteFailureIsLogged(t *testing.T) {
	logs := &lockedBuffer{}
	e := newTestEnvWithOps(t, newRecordingOps(), func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	if err := e.store.DB().Exec("DROP TABLE audit_events").Error; err != nil {
		t.Fatal(err)
	}
	var app store.App
	e.call("POST", "/v1/apps", map[string]any{"name": "unaudited", "description": "words-only-in-the-body"}, 201, &app)
	// The event is written before the handler returns, and net/http sends
	// a small answer only then: the log holds it by now.
	out := logs.String()
	for _, want := range []string{"audit event not recorded", "action=createApp", app.ID, "status=201"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "words-only-in-the-body") || strings.Contains(out, e.token) {
		t.Errorf("the log holds the request's body or token:\n%s", out)
	}
}

// lockedBuffer is a bytes.Buffer that a logger and a test share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Every parameter of every route is an audit object of a kind of its own in
// that route: a new parameter name fails here until paramKinds names it.
func TestEveryRouteParameterIsAnAuditObject(t *testing.T) {
	e := &Server{}
	for _, r := range e.routeTable() {
		kinds := map[string]bool{}
		for _, o := range pathObjects(r.path) {
			if _, known := paramKinds[o.param]; (!known && o.param != "id") || kinds[o.kind] {
				t.Errorf("%s %s: parameter :%s is object %q: add it to paramKinds", r.method, r.path, o.param, o.kind)
			}
			kinds[o.kind] = true
		}
	}
	if got := pathObjects("/installs/:id/operations/:op/steps/:step/approve"); !slices.Equal(got,
		[]pathObject{{"id", "install_id"}, {"op", "operation_id"}, {"step", "step"}}) {
		t.Errorf("the approve route's objects: %v", got)
	}
}
