package api

import (
	"context"
	"errors"
	"github.com/outpost-dev/outpost/api/wire"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

func TestAppsAndComponents(t *testing.T) {
	e := newTestEnv(t)
	var app store.App
	e.call("POST", "/v1/apps", map[string]any{"name": "demo", "description": "the demo product"}, 201, &app)
	if app.ID == "" || app.Name != "demo" || app.Description != "the demo product" || app.OrgID != e.org.ID {
		t.Fatalf("created app = %+v", app)
	}
	var got store.App
	e.call("GET", "/v1/apps/"+app.ID, nil, 200, &got)
	if got.ID != app.ID || got.Name != "demo" {
		t.Fatalf("GET app = %+v", got)
	}
	var apps struct{ Apps []store.App }
	e.call("GET", "/v1/apps", nil, 200, &apps)
	if len(apps.Apps) != 1 || apps.Apps[0].ID != app.ID {
		t.Fatalf("apps = %+v", apps)
	}

	var db, web store.Component
	e.call("POST", "/v1/apps/"+app.ID+"/components", map[string]any{"name": "db", "type": "terraform_module",
		"config": map[string]any{"source": "./db"}}, 201, &db)
	e.call("POST", "/v1/apps/"+app.ID+"/components", map[string]any{"name": "web", "type": "helm_chart",
		"dependencies": []string{"db"}}, 201, &web)
	if db.AppID != app.ID || db.Config["source"] != "./db" || len(web.Dependencies) != 1 || web.Dependencies[0] != "db" {
		t.Fatalf("components = %+v %+v", db, web)
	}
	var cmps struct{ Components []store.Component }
	e.call("GET", "/v1/apps/"+app.ID+"/components", nil, 200, &cmps)
	if len(cmps.Components) != 2 {
		t.Fatalf("components = %+v", cmps)
	}
	e.call("GET", "/v1/components/"+web.ID, nil, 200, &got)

	// db is needed by web; web can go, then db.
	if res := e.call("DELETE", "/v1/components/"+db.ID, nil, 409, nil); !strings.Contains(res.apiError(t).Message, "web") {
		t.Fatalf("conflict does not say which component depends on db: %s", res)
	}
	e.call("DELETE", "/v1/components/"+web.ID, nil, 204, nil)
	e.call("GET", "/v1/components/"+web.ID, nil, 404, nil)
	e.call("DELETE", "/v1/components/"+db.ID, nil, 204, nil)

	e.call("DELETE", "/v1/apps/"+app.ID, nil, 204, nil)
	e.call("GET", "/v1/apps/"+app.ID, nil, 404, nil)
	e.call("DELETE", "/v1/apps/"+app.ID, nil, 404, nil)
}

func TestInstallShowsRegistrationTokenOnceAndHidesSensitiveInputs(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	var app store.App
	e.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 201, &app)

	var created installAnswer
	res := e.call("POST", "/v1/installs", map[string]any{"app_id": app.ID, "name": "customer-1", "inputs": []map[string]any{
		{"name": "region", "value": "eu-west-1"},
		{"name": "db_password", "value": "hunter2-s3cret", "sensitive": true},
	}}, 201, &created)
	if strings.Contains(string(res.body), "hunter2-s3cret") {
		t.Fatalf("the create answer shows a sensitive value: %s", res.body)
	}
	if created.Runner == nil || created.Runner.ID == "" || !strings.HasPrefix(created.Runner.RegistrationToken, protocol.RegistrationTokenPrefix) {
		t.Fatalf("created install has no runner with a registration token: %s", res.body)
	}
	checkInputs := func(what string, inputs []wire.Input) {
		t.Helper()
		if len(inputs) != 2 {
			t.Fatalf("%s: inputs = %+v", what, inputs)
		}
		for _, in := range inputs {
			switch in.Name {
			case "region":
				if in.Sensitive || in.Value == nil || *in.Value != "eu-west-1" {
					t.Fatalf("%s: region input = %+v", what, in)
				}
			case "db_password":
				if !in.Sensitive || in.Value != nil {
					t.Fatalf("%s: sensitive input shown: %+v", what, in)
				}
			default:
				t.Fatalf("%s: unexpected input %q", what, in.Name)
			}
		}
	}
	checkInputs("create", created.Inputs)

	// Reading the install again never shows the token or the secret.
	var got installAnswer
	res = e.call("GET", "/v1/installs/"+created.ID, nil, 200, &got)
	for _, secret := range []string{created.Runner.RegistrationToken, "hunter2-s3cret", "registration_token"} {
		if strings.Contains(string(res.body), secret) {
			t.Fatalf("GET install shows %q: %s", secret, res.body)
		}
	}
	if got.Runner == nil || got.Runner.ID != created.Runner.ID {
		t.Fatalf("GET install runner = %+v, want %s", got.Runner, created.Runner.ID)
	}
	checkInputs("get", got.Inputs)
	var list struct{ Installs []installAnswer }
	res = e.call("GET", "/v1/installs?app_id="+app.ID, nil, 200, &list)
	if len(list.Installs) != 1 || strings.Contains(string(res.body), created.Runner.RegistrationToken) || strings.Contains(string(res.body), "hunter2") {
		t.Fatalf("install list = %s", res.body)
	}
	checkInputs("list", list.Installs[0].Inputs)
	e.call("GET", "/v1/installs?app_id=app_other", nil, 200, &list)
	if len(list.Installs) != 0 {
		t.Fatalf("installs of another app: %+v", list.Installs)
	}

	// The token shown is the one that works, once.
	if _, _, err := e.store.RegisterRunner(ctx, created.Runner.RegistrationToken, store.RunnerInfo{Name: "host-1", Version: "1.0.0", Capabilities: []string{"terraform"}}); err != nil {
		t.Fatalf("register with the token from the create answer: %v", err)
	}

	// An app with installs is not deleted; the install is, then the app.
	e.call("DELETE", "/v1/apps/"+app.ID, nil, 409, nil)
	e.call("DELETE", "/v1/installs/"+created.ID, nil, 204, nil)
	e.call("GET", "/v1/installs/"+created.ID, nil, 404, nil)
	e.call("GET", "/v1/runners/"+created.Runner.ID, nil, 404, nil)
	e.call("DELETE", "/v1/apps/"+app.ID, nil, 204, nil)
}

func TestRunners(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	_, inst := e.fixture()

	var list struct{ Runners []wire.Runner }
	e.call("GET", "/v1/runners", nil, 200, &list)
	byKind := map[string]wire.Runner{}
	for _, r := range list.Runners {
		byKind[r.Kind] = r
	}
	if len(list.Runners) != 2 || byKind["build"].ID == "" || byKind["install"].ID != inst.Runner.ID {
		t.Fatalf("runners = %+v, want the install runner and the org's build runner", list.Runners)
	}
	if r := byKind["install"]; r.Status != "offline" || r.InstallID == nil || *r.InstallID != inst.ID || r.LastSeenAt != nil {
		t.Fatalf("install runner before registering = %+v", r)
	}
	// Listing again does not create a second build runner.
	e.call("GET", "/v1/runners", nil, 200, &list)
	if len(list.Runners) != 2 {
		t.Fatalf("second listing: %d runners", len(list.Runners))
	}

	// Rotating issues a working token and retires the previous one.
	var first, second wire.RegistrationToken
	e.call("POST", "/v1/runners/"+inst.Runner.ID+"/registration-token", nil, 200, &first)
	e.call("POST", "/v1/runners/"+inst.Runner.ID+"/registration-token", nil, 200, &second)
	if first.RunnerID != inst.Runner.ID || first.RegistrationToken == second.RegistrationToken {
		t.Fatalf("rotated tokens: %+v %+v", first, second)
	}
	if _, _, err := e.store.RegisterRunner(ctx, first.RegistrationToken, store.RunnerInfo{Name: "h", Version: "1"}); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("a replaced registration token still works: %v", err)
	}
	if _, _, err := e.store.RegisterRunner(ctx, inst.Runner.RegistrationToken, store.RunnerInfo{Name: "h", Version: "1"}); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("the original registration token still works: %v", err)
	}
	_, runnerToken, err := e.store.RegisterRunner(ctx, second.RegistrationToken, store.RunnerInfo{Name: "host-1", Version: "1.2.3", Capabilities: []string{"terraform", "helm"}})
	if err != nil {
		t.Fatalf("register with the rotated token: %v", err)
	}

	var r wire.Runner
	e.call("GET", "/v1/runners/"+inst.Runner.ID, nil, 200, &r)
	if r.Status != "online" || r.Version != "1.2.3" || len(r.Capabilities) != 2 || r.LastSeenAt == nil || r.Name != "host-1" ||
		r.RunningJobs != 0 || r.QueuedJobs != 0 {
		t.Fatalf("registered runner = %+v", r)
	}
	// Two jobs queued, one claimed: one running, one waiting, here and in the list.
	for _, key := range []string{"k1", "k2"} {
		if _, _, err := e.store.EnqueueJob(ctx, store.JobSpec{Key: key, OrgID: r.OrgID, RunnerID: r.ID, Type: protocol.JobTypeNoop}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.ClaimJob(ctx, r.ID, time.Minute, store.Claimant{}); err != nil {
		t.Fatal(err)
	}
	e.call("GET", "/v1/runners/"+inst.Runner.ID, nil, 200, &r)
	e.call("GET", "/v1/runners", nil, 200, &list)
	if r.RunningJobs != 1 || r.QueuedJobs != 1 || !slices.ContainsFunc(list.Runners, func(l wire.Runner) bool { return l.ID == r.ID && l.RunningJobs == 1 && l.QueuedJobs == 1 }) {
		t.Fatalf("a runner with a job running and one queued: %+v, listed %+v", r, list.Runners)
	}
	if err := e.store.TouchRunners(ctx, []string{r.ID}, time.Now().Add(-2*DefaultOnlineWindow)); err != nil {
		t.Fatal(err)
	}
	e.call("GET", "/v1/runners/"+inst.Runner.ID, nil, 200, &r)
	if r.Status != "offline" {
		t.Fatalf("runner last seen %s shows %s", r.LastSeenAt, r.Status)
	}

	e.call("POST", "/v1/runners/"+inst.Runner.ID+"/revoke-tokens", nil, 204, nil)
	if _, err := e.store.AuthenticateRunner(ctx, runnerToken); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("runner token works after revoke-tokens: %v", err)
	}
	e.call("POST", "/v1/runners/run_missing/revoke-tokens", nil, 404, nil)
	e.call("POST", "/v1/runners/run_missing/registration-token", nil, 404, nil)
}

func TestTokens(t *testing.T) {
	e := newTestEnv(t)
	var created wire.NewToken
	e.call("POST", "/v1/tokens", map[string]any{"name": "ci"}, 201, &created)
	if created.ID == "" || created.Name != "ci" || !strings.HasPrefix(created.Token, protocol.APITokenPrefix) {
		t.Fatalf("created token = %+v", created)
	}
	// The new token works, and lists tokens without their values.
	var list struct{ Tokens []map[string]any }
	res := e.callAs(created.Token, "GET", "/v1/tokens", nil, 200, &list)
	if len(list.Tokens) != 2 || strings.Contains(string(res.body), created.Token) || strings.Contains(string(res.body), e.token) ||
		strings.Contains(string(res.body), store.HashToken(created.Token)) {
		t.Fatalf("token list = %s", res.body)
	}
	e.call("DELETE", "/v1/tokens/"+created.ID, nil, 204, nil)
	e.callAs(created.Token, "GET", "/v1/apps", nil, 401, nil)
	e.call("DELETE", "/v1/tokens/"+created.ID, nil, 404, nil) // already revoked
	e.call("GET", "/v1/tokens", nil, 200, &list)
	for _, tok := range list.Tokens {
		if tok["id"] == created.ID && tok["revoked_at"] == nil {
			t.Fatalf("revoked token listed without revoked_at: %v", tok)
		}
	}
}

func TestAuthenticationAndUnknownRoutes(t *testing.T) {
	e := newTestEnv(t)
	revoked, plain, err := e.store.CreateAPIToken(context.Background(), store.NewAPIToken{OrgID: e.org.ID, Name: "old", Scopes: []string{store.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.RevokeAPIToken(context.Background(), e.org.ID, revoked.ID); err != nil {
		t.Fatal(err)
	}
	for name, header := range map[string]string{
		"missing":      "",
		"empty bearer": "Bearer ",
		"basic":        "Basic " + e.token,
		"unknown":      "Bearer " + protocol.APITokenPrefix + "not-a-real-token",
		"runner token": "Bearer " + protocol.RunnerTokenPrefix + "xyz",
		"revoked":      "Bearer " + plain,
	} {
		for _, path := range []string{"/v1/apps", "/v1/runners", "/v1/jobs/job_x/logs"} {
			req := newRequest(t, e, "GET", path)
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			res := e.do(req)
			if res.status != 401 || res.apiError(t).Code != protocol.CodeUnauthorized || res.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s token, GET %s: got %s (WWW-Authenticate %q), want 401", name, path, res, res.header.Get("WWW-Authenticate"))
			}
		}
	}
	// No token needed for the document and the health check.
	if res := e.send("GET", "/v1/openapi.json", "", nil); res.status != 200 {
		t.Errorf("openapi.json without a token: %s", res)
	}
	if res := e.send("GET", "/healthz", "", nil); res.status != 200 || string(res.body) != `{"status":"ok"}`+"\n" {
		t.Errorf("healthz: %s", res)
	}
	// An unknown route is a JSON 404, a known one with the wrong method a
	// JSON 405.
	for _, path := range []string{"/v1/no-such-route", "/v1/apps/app_x/nothing", "/nope"} {
		if res := e.send("GET", path, e.token, nil); res.status != 404 || res.apiError(t).Code != protocol.CodeNotFound {
			t.Errorf("GET %s: %s, want a JSON 404", path, res)
		}
	}
	if res := e.send("PUT", "/v1/apps", e.token, `{}`); res.status != 405 || res.apiError(t).Message == "" {
		t.Errorf("PUT /v1/apps: %s, want a JSON 405", res)
	}
}
