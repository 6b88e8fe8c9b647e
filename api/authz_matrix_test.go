package api

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/outpost-dev/outpost/api/wire"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// matrixIDs fill a route's parameters with one org's objects: ":id" by the
// segment before it (apps, installs, …), any other parameter by its name.
type matrixIDs map[string]string

// matrixIDKeys are the entries of matrixIDs that are IDs (the others are
// names and versions, the same in every org).
var matrixIDKeys = []string{"org", "users", "apps", "components", "installs", "runners", "jobs", "tokens", "cmd", "rid", "op", "build_id", "uid", "bundle", "run", "runbook_run", "subscriptions", "deliveries"}

// matrixBodies are request bodies by the schema a route takes ("{key}" is
// filled from matrixIDs); a schema not listed is sent {}.
var matrixBodies = map[string]string{
	"CreateTokenRequest":                    `{"name":"matrix","scopes":["read"]}`,
	"CreateUserRequest":                     `{"name":"matrix","roles":[{"role":"viewer"}]}`,
	"SetRolesRequest":                       `{"roles":[{"role":"viewer"}]}`,
	"FourEyes":                              `{"four_eyes":true}`,
	"RunnerPolicyRequest":                   `{"version":""}`,
	"CreateAppRequest":                      `{"name":"matrix"}`,
	"OIDCSettings":                          `{"issuer":"https://idp.test","client_id":"outpost","redirect_url":"https://outpost.test/auth/oidc/callback","groups":{"ops":[{"role":"operator"}]}}`,
	"CreateComponentRequest":                `{"name":"matrix","type":"helm_chart"}`,
	"RebuildRequest":                        `{"component":"{name}"}`,
	"CreateInstallRequest":                  `{"app_id":"{apps}","name":"matrix"}`,
	"PatchLabelsRequest":                    `{"set":{"tier":"gold"}}`,
	"PutLabelsRequest":                      `{"labels":{"tier":"gold"}}`,
	"UpdateInputsRequest":                   `{"set":[{"name":"region","value":"us-east-1"}]}`,
	"CreateCommandRequest":                  `{"command":["cat","/etc/passwd"]}`,
	"RunActionRequest":                      `{"inputs":{"name":"matrix"}}`,
	"DeployConfigRequest":                   `{"config_version":1}`,
	"CreateReleaseRequest":                  `{"config_version":1,"installs":{"ids":["{installs}"]}}`,
	"MaintenanceWindowsRequest":             `{"windows":[]}`,
	"DriftScheduleRequest":                  `{"every":"1h"}`,
	"ApprovalMode":                          `{"approval_mode":"prompt"}`,
	"CreateNotificationSubscriptionRequest": `{"name":"matrix","event_types":["operation.failed"],"channel":"slack","url":"https://hooks.slack.test/x"}`,
	"PatchNotificationSubscriptionRequest":  `{"enabled":false}`,
}

// matrixOwnOrg are the routes that name no object and legitimately change
// something for any valid token: they act on the caller's own org.
var matrixOwnOrg = map[string]string{
	"POST /tokens":                      "creates a token in the caller's own org",
	"POST /users":                       "creates a user in the caller's own org",
	"POST /apps":                        "creates an app in the caller's own org",
	"POST /notifications/subscriptions": "creates a notification subscription in the caller's own org",
	"GET /runners":                      "creates the caller's own build runner on first use",
	"PUT /runner-policy":                "sets the runner version of the caller's own org",
	"PUT /settings/oidc":                "sets the single sign-on of the caller's own org",
	"DELETE /settings/oidc":             "turns off the single sign-on of the caller's own org",
	"POST /settings/release-key":        "makes the release key of the caller's own org",
}

// matrixWorld is the world of e's org (an app with a synced config and its
// builds, an install with a job, a command, an operation with a step and a
// release), as the IDs that fill the routes.
func (e *testEnv) matrixWorld() matrixIDs {
	e.t.Helper()
	ctx := context.Background()
	w := e.world()
	e.syncConfig(w.app.ID, exampleFiles(e.t), 201)
	builds := e.listBuilds(w.app.ID, "")
	e.succeedBuilds(w.app.ID) // a release bundle can be exported
	if _, _, err := e.store.ReleaseKey(ctx, e.org.ID); err != nil {
		e.t.Fatal(err)
	}
	var tokens struct{ Tokens []wire.Token }
	e.call("GET", "/v1/tokens", nil, 200, &tokens)
	rel, err := e.store.CreateRelease(ctx, store.Release{OrgID: e.org.ID, AppID: w.app.ID, ConfigVersion: 1, BatchSize: 1,
		FailureThreshold: 1, Installs: []store.ReleaseInstall{{InstallID: w.inst.ID, InstallName: w.inst.Name, Batch: 1, ToVersion: 1}}})
	if err != nil {
		e.t.Fatal(err)
	}
	op, err := e.store.StartOperation(ctx, store.InstallOperation{OrgID: e.org.ID, InstallID: w.inst.ID, Kind: store.OpDriftCheck,
		ApprovalMode: status.ApproveAll, WorkflowID: "install/" + w.inst.ID + "/drift_check"})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.AddSteps(ctx, op.ID, []store.NewStep{{Name: status.SandboxStep}}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.SetOIDC(ctx, e.org.ID, store.OIDCSettings{Issuer: "https://idp.test", ClientID: "outpost",
		RedirectURL: "https://outpost.test/auth/oidc/callback"}); err != nil {
		e.t.Fatal(err)
	}
	upd, err := e.store.CreateRunnerUpdate(ctx, store.RunnerUpdate{ID: store.NewID("rup"), OrgID: e.org.ID, InstallID: w.inst.ID,
		RunnerID: w.inst.Runner.ID, Version: "v2", Digest: "sha256:00", WorkflowID: "install/" + w.inst.ID + "/runner-update"})
	if err != nil {
		e.t.Fatal(err)
	}
	bundle, err := e.store.CreateSupportBundle(ctx, store.SupportBundle{OrgID: e.org.ID, InstallID: w.inst.ID, WorkflowID: "install/" + w.inst.ID + "/support-bundle/x"})
	if err != nil {
		e.t.Fatal(err)
	}
	now := time.Now()
	bundle.Status, bundle.FinishedAt = status.JobSucceeded, &now
	if err := e.store.UpdateSupportBundle(ctx, bundle); err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.DB().Create(&store.SupportBundleArchive{BundleID: bundle.ID, Data: []byte("gz"), CreatedAt: now}).Error; err != nil {
		e.t.Fatal(err)
	}
	var list struct{ Components []store.Component }
	e.call("GET", "/v1/apps/"+w.app.ID+"/components", nil, 200, &list)
	if len(builds) == 0 || len(list.Components) == 0 {
		e.t.Fatalf("the world has builds %v, components %v", builds, list.Components)
	}
	nsub, ndl := e.notificationWorld()
	admin, err := e.store.GetUserByName(ctx, e.org.ID, store.LocalAdminName)
	if err != nil {
		e.t.Fatal(err)
	}
	return matrixIDs{"org": e.org.ID, "users": admin.ID, "apps": w.app.ID, "components": list.Components[0].ID, "installs": w.inst.ID,
		"runners": w.inst.Runner.ID, "jobs": w.job.ID, "tokens": tokens.Tokens[0].ID, "cmd": w.cmd.ID, "rid": rel.ID,
		"op": op.ID, "build_id": builds[0].ID, "uid": upd.ID, "version": "1", "step": status.SandboxStep, "name": list.Components[0].Name,
		"bundle": bundle.ID, "action": "hello", "run": e.matrixActionRun(w.inst.ID),
		"runbook": "release", "runbook_run": e.matrixRunbookRun(w.inst.ID),
		"subscriptions": nsub, "deliveries": ndl}
}

// matrixActionRun records a run of the demo app's hello action.
func (e *testEnv) matrixActionRun(installID string) string {
	e.t.Helper()
	run, err := e.store.CreateActionRun(context.Background(), store.ActionRun{OrgID: e.org.ID, InstallID: installID, Action: "hello",
		ConfigVersion: 1, Trigger: "manual", WorkflowID: "install/" + installID + "/action/hello/x"}, []string{"greet"})
	if err != nil {
		e.t.Fatal(err)
	}
	return run.ID
}

// ids are the IDs among m.
func (m matrixIDs) ids() []string {
	var out []string
	for _, k := range matrixIDKeys {
		out = append(out, m[k])
	}
	return out
}

// missing is m with every ID replaced by one that does not exist.
func (m matrixIDs) missing() matrixIDs {
	out := matrixIDs{}
	for k, v := range m {
		out[k] = v
		if slices.Contains(matrixIDKeys, k) {
			out[k] = missingID(v)
		}
	}
	return out
}

// fill replaces the route's parameters, the i-th with pick(i)'s value.
func fill(t *testing.T, path string, pick func(i int) matrixIDs) string {
	t.Helper()
	segs := strings.Split(path, "/")
	n := 0
	for i, s := range segs {
		name, ok := strings.CutPrefix(s, ":")
		if !ok {
			continue
		}
		if name == "id" {
			name = segs[i-1]
		}
		v, ok := pick(n)[name]
		if !ok {
			t.Fatalf("%s: no value for :%s: add one to matrixWorld", path, name)
		}
		segs[i], n = v, n+1
	}
	return strings.Join(segs, "/")
}

// matrixQuery is the query naming an object that route r takes, if any
// ("?app_id=" and m's app).
func matrixQuery(t *testing.T, r route, m matrixIDs) string {
	for _, q := range r.doc.query {
		if kind, ok := strings.CutSuffix(q.name, "_id"); ok {
			id, ok := m[kind+"s"]
			if !ok {
				t.Fatalf("%s: no value for ?%s: add one to matrixWorld", r.path, q.name)
			}
			return "?" + q.name + "=" + id
		}
	}
	return ""
}

// matrixBody is the body route r is sent with, filled from m.
func matrixBody(r route, m matrixIDs) any {
	if r.doc.body == nil {
		return nil
	}
	b, ok := matrixBodies[reflect.TypeOf(r.doc.body).Name()]
	if !ok {
		return "{}"
	}
	for k, v := range m {
		b = strings.ReplaceAll(b, "{"+k+"}", v)
	}
	return b
}

// leaked are the IDs of ids in body that the request (sent) did not carry.
func leaked(body []byte, sent string, ids []string) []string {
	var out []string
	for _, id := range ids {
		if strings.Contains(string(body), id) && !strings.Contains(sent, id) {
			out = append(out, id)
		}
	}
	return out
}

// TestAuthzMatrixV1 sends every /v1 route of the route table, its
// parameters (and an ID query) filled with org A's objects, with each
// credential but A's own: none or a bad one is 401; A's session cookie on a
// change without the CSRF proof is 403; another org's token finds nothing of
// A's, answers exactly like a missing ID and changes nothing. No answer names
// an ID the request did not.
func TestAuthzMatrixV1(t *testing.T) {
	e := newTestEnvWithOps(t, newRecordingOps(), func(c *Config) { c.GatewayURL = "https://gateway.example.com" })
	ctx := context.Background()
	a := e.matrixWorld()
	bOrg, bToken, err := e.store.CreateOrg(ctx, "globex")
	if err != nil {
		t.Fatal(err)
	}
	eb := *e
	eb.org, eb.token = bOrg, bToken
	b := eb.matrixWorld()
	bad := e.badCredentials(a)
	everyID := append(a.ids(), b.ids()...)
	started, builds := len(e.ops.startedCommands()), len(e.ops.startedBuilds())

	calls, changing := 0, 0
	for _, r := range e.srv.routes {
		key := r.method + " " + r.path
		t.Run(key, func(t *testing.T) {
			e := e.with(t)
			path := "/v1" + fill(t, r.path, func(int) matrixIDs { return a }) + matrixQuery(t, r, a)
			body := matrixBody(r, a)
			before := e.snapshotAll()
			for name, tok := range bad {
				want := 401
				if r.doc.public {
					want = r.doc.status
				}
				res := e.send(r.method, path, tok, body)
				if res.status != want {
					t.Errorf("%s: %s, want %d", name, res, want)
				}
				if l := leaked(res.body, "", everyID); len(l) > 0 {
					t.Errorf("%s: the answer names %v: %s", name, l, res.body)
				}
				calls++
			}
			if !r.doc.public && r.method != "GET" {
				calls += e.checkCSRF(path, r.method, toString(body))
				changing++
			}
			after := e.snapshotAll()
			e.checkRefusalsAudited(r, auditAdded(t, before, after), a["org"])
			if d := snapshotDiff(before, after); d != "" {
				t.Errorf("refused requests changed stored rows:\n%s", d)
			}
			before = e.snapshotAll()
			foreign := e.checkForeign(r, a, b, bToken)
			calls += foreign
			after = e.snapshotAll()
			e.checkForeignAudited(r, auditAdded(t, before, after), b["org"], foreign)
			if _, own := matrixOwnOrg[key]; !own {
				if d := snapshotDiff(before, after); d != "" {
					t.Errorf("another org's requests changed stored rows:\n%s", d)
				}
			}
			if r.method == "GET" { // A's own token finds every object: the IDs are real
				e.call(r.method, path, nil, r.doc.status, nil)
			}
		})
	}
	if n, m := len(e.ops.startedCommands()), len(e.ops.startedBuilds()); n != started || m != builds || len(e.ops.cancelledWorkflows()) != 0 ||
		len(e.ops.decisions) != 0 {
		t.Errorf("refused requests reached the workflows: %d commands, %d builds started; cancelled %v; decisions %v",
			n-started, m-builds, e.ops.cancelledWorkflows(), e.ops.decisions)
	}
	t.Logf("%d routes × %d credentials (%d bad ones, another org's token), a forged session change on %d: %d requests",
		len(e.srv.routes), len(bad)+1, len(bad), changing, calls)
}

func toString(body any) string {
	s, _ := body.(string)
	return s
}

// badCredentials are what must never pass for org A: nothing, a malformed
// token, A's revoked API token, A's runner token and registration token.
func (e *testEnv) badCredentials(a matrixIDs) map[string]string {
	e.t.Helper()
	var tok wire.NewToken
	e.call("POST", "/v1/tokens", map[string]any{"name": "revoked", "scopes": []string{"admin"}}, 201, &tok)
	e.call("DELETE", "/v1/tokens/"+tok.ID, nil, 204, nil)
	var reg wire.RegistrationToken
	e.call("POST", "/v1/runners/"+a["runners"]+"/registration-token", nil, 200, &reg)
	_, runnerTok, err := e.store.RegisterRunner(context.Background(), reg.RegistrationToken, "matrix", "1", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.call("POST", "/v1/runners/"+a["runners"]+"/registration-token", nil, 200, &reg)
	return map[string]string{"no token": "", "malformed token": "nope", "revoked API token": tok.Token,
		"A's runner token": runnerTok, "A's registration token": reg.RegistrationToken}
}

// checkCSRF sends a change with A's session cookie, as another site would:
// without the CSRF header, or with a wrong one. Both are 403.
func (e *testEnv) checkCSRF(path, method, body string) int {
	e.t.Helper()
	session, proof := &http.Cookie{Name: SessionCookie, Value: e.token}, &http.Cookie{Name: CSRFCookie, Value: "proof-1"}
	for _, csrf := range []string{"", "proof-2"} {
		if res := e.sendCookies(method, path, csrf, body, session, proof); res.status != 403 || res.apiError(e.t).Code != codeCSRF {
			e.t.Errorf("A's session cookie with CSRF header %q: %s, want 403 %s", csrf, res, codeCSRF)
		}
	}
	return 2
}

// checkForeign sends route r with org B's token: on A's objects (and, for a
// route naming two, on B's first and A's second) it must answer as on
// missing ones; a route naming nothing of A's answers as for B, without A's
// IDs. It returns the number of requests made.
func (e *testEnv) checkForeign(r route, a, b matrixIDs, bToken string) int {
	t := e.t
	t.Helper()
	key := r.method + " " + r.path
	variants := []func(int) matrixIDs{func(int) matrixIDs { return a }}
	if strings.Count(r.path, ":") >= 2 {
		variants = append(variants, func(i int) matrixIDs { return map[bool]matrixIDs{true: b, false: a}[i == 0] })
	}
	calls := 0
	for i, pick := range variants {
		route := "/v1" + fill(t, r.path, pick)
		path, body := route+matrixQuery(t, r, pick(1)), matrixBody(r, pick(1))
		sent := path + toString(body)
		if i > 0 && leaked([]byte(sent), "", a.ids()) == nil {
			continue // its second parameter is a name, not an object of A's
		}
		res := e.send(r.method, path, bToken, body)
		calls++
		if l := leaked(res.body, sent, a.ids()); len(l) > 0 {
			t.Errorf("another org's token: the answer names A's %v: %s", l, res.body)
		}
		if leaked([]byte(sent), "", a.ids()) == nil { // names nothing of A's
			if why, own := matrixOwnOrg[key]; r.method != "GET" && !own {
				t.Errorf("%s names no object and changes something: add it to matrixOwnOrg with why", key)
			} else if res.status != r.doc.status {
				t.Errorf("another org's token (%s): %s, want %d", why, res, r.doc.status)
			}
			continue
		}
		missing := func(i int) matrixIDs { return pick(i).missing() }
		if pick(0)["org"] == b["org"] {
			missing = func(i int) matrixIDs { return map[bool]matrixIDs{true: b, false: a.missing()}[i == 0] }
		}
		mpath, mbody := "/v1"+fill(t, r.path, missing)+matrixQuery(t, r, missing(1)), matrixBody(r, missing(1))
		absent := e.send(r.method, mpath, bToken, mbody)
		calls++
		if leaked([]byte(route), "", a.ids()) != nil && res.status != 404 {
			t.Errorf("another org's token on %s: %s, want 404", path, res)
		}
		got, want := string(res.body), string(absent.body)
		for _, id := range a.ids() {
			got, want = strings.ReplaceAll(got, id, "ID"), strings.ReplaceAll(want, missingID(id), "ID")
		}
		if res.status != absent.status || got != want {
			t.Errorf("another org's token on %s: A's objects answer %d %s, missing ones %d %s", path, res.status, got, absent.status, want)
		}
	}
	return calls
}

// snapshotDiff is the rows only one of two snapshots holds, by table.
func snapshotDiff(before, after map[string][]string) string {
	tables := map[string]bool{}
	for t := range maps.Keys(before) {
		tables[t] = true
	}
	for t := range maps.Keys(after) {
		tables[t] = true
	}
	var out []string
	for _, table := range slices.Sorted(maps.Keys(tables)) {
		for _, row := range before[table] {
			if !slices.Contains(after[table], row) {
				out = append(out, "- "+table+" "+row)
			}
		}
		for _, row := range after[table] {
			if !slices.Contains(before[table], row) {
				out = append(out, "+ "+table+" "+row)
			}
		}
	}
	return strings.Join(out, "\n")
}

// matrixAudit is an audit event as the matrix checks it.
type matrixAudit struct {
	OrgID     string `json:"org_id"`
	TokenName string `json:"token_name"`
	Via       string `json:"via"`
	Status    int    `json:"status"`
	ErrorCode string `json:"error_code"`
}

// auditAdded takes the audit events out of two snapshots and returns those
// added between them.
func auditAdded(t *testing.T, before, after map[string][]string) []matrixAudit {
	t.Helper()
	var out []matrixAudit
	for _, row := range after["audit_events"] {
		if slices.Contains(before["audit_events"], row) {
			continue
		}
		var ev matrixAudit
		if err := json.Unmarshal([]byte(row), &ev); err != nil {
			t.Fatalf("audit event %s: %v", row, err)
		}
		out = append(out, ev)
	}
	delete(before, "audit_events")
	delete(after, "audit_events")
	return out
}

// checkRefusalsAudited: of the refused requests on a changing route, those
// that carried a token of A's (the revoked one, the forged session's) are
// in A's audit log as refused; the others name no org and are not.
func (e *testEnv) checkRefusalsAudited(r route, got []matrixAudit, aOrg string) {
	e.t.Helper()
	var want []matrixAudit
	if r.method != "GET" && !r.doc.public {
		csrf := matrixAudit{aOrg, "admin", store.ViaSession, 403, codeCSRF}
		want = []matrixAudit{{aOrg, "revoked", store.ViaBearer, 401, "unauthorized"}, csrf, csrf}
	}
	if r.method == "GET" && r.doc.audited { // an audited GET sends no CSRF check
		want = []matrixAudit{{aOrg, "revoked", store.ViaBearer, 401, "unauthorized"}}
	}
	sortAudit(got)
	sortAudit(want)
	if !slices.Equal(got, want) {
		e.t.Errorf("refused requests audited as %+v, want %+v", got, want)
	}
}

// checkForeignAudited: each of the n changing requests org B sent is in B's
// audit log (refused, but where it acted on B's own org).
func (e *testEnv) checkForeignAudited(r route, got []matrixAudit, bOrg string, n int) {
	e.t.Helper()
	if r.method == "GET" && !r.doc.audited {
		n = 0
	}
	if len(got) != n {
		e.t.Errorf("another org's %d requests made %d audit events: %+v", n, len(got), got)
	}
	_, own := matrixOwnOrg[r.method+" "+r.path]
	for _, ev := range got {
		if ev.OrgID != bOrg || ev.TokenName != "admin" || (!own && ev.Status < 400) {
			e.t.Errorf("another org's request audited as %+v", ev)
		}
	}
}

func sortAudit(evs []matrixAudit) {
	slices.SortFunc(evs, func(a, b matrixAudit) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
}
