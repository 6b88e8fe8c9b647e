package api

import (
	"context"
	"github.com/outpost-dev/outpost/api/wire"
	"reflect"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/store"
)

// TestOrgsAreIsolated: another org's token finds nothing of acme's, answered
// exactly like an ID that does not exist, changes nothing, and lists nothing.
func TestOrgsAreIsolated(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	w := e.world()
	app, cmp, inst, job, cmd := w.app, w.cmp, w.inst, w.job, w.cmd
	var tokens struct{ Tokens []wire.Token }
	e.call("GET", "/v1/tokens", nil, 200, &tokens)
	_, other, err := e.store.CreateOrg(ctx, "globex")
	if err != nil {
		t.Fatal(err)
	}

	before := e.snapshot()
	e.checkForeignLikeMissing(other, []foreignCase{
		{"GET", "/v1/apps/%s", app.ID, nil},
		{"DELETE", "/v1/apps/%s", app.ID, nil},
		{"GET", "/v1/apps/%s/components", app.ID, nil},
		{"POST", "/v1/apps/%s/components", app.ID, map[string]any{"name": "web", "type": "helm_chart"}},
		{"GET", "/v1/components/%s", cmp.ID, nil},
		{"DELETE", "/v1/components/%s", cmp.ID, nil},
		{"GET", "/v1/installs/%s", inst.ID, nil},
		{"DELETE", "/v1/installs/%s", inst.ID, nil},
		{"GET", "/v1/installs/%s/jobs", inst.ID, nil},
		{"GET", "/v1/installs/%s/runner/helm-install", inst.ID, nil},
		{"GET", "/v1/installs/%s/runner/helm-install?namespace=Not_A_Label", inst.ID, nil},
		{"GET", "/v1/installs/%s/commands", inst.ID, nil},
		{"POST", "/v1/installs/%s/commands", inst.ID, map[string]any{"command": []string{"cat", "/etc/passwd"}}},
		{"GET", "/v1/installs/%s/commands/" + cmd.ID, inst.ID, nil},
		{"POST", "/v1/installs/%s/commands/" + cmd.ID + "/cancel", inst.ID, nil},
		{"GET", "/v1/jobs/%s", job.ID, nil},
		{"GET", "/v1/jobs/%s/logs", job.ID, nil},
		{"GET", "/v1/jobs/%s/logs?follow=true", job.ID, nil},
		{"GET", "/v1/runners/%s", inst.Runner.ID, nil},
		{"POST", "/v1/runners/%s/registration-token", inst.Runner.ID, nil},
		{"POST", "/v1/runners/%s/revoke-tokens", inst.Runner.ID, nil},
		{"DELETE", "/v1/tokens/%s", tokens.Tokens[0].ID, nil},
	})
	// Creating an install of another org's app is refused like a missing app.
	res := e.send("POST", "/v1/installs", other, map[string]any{"app_id": app.ID, "name": "stolen"})
	if res.status != 400 || res.apiError(t).Field != "app_id" {
		t.Errorf("install of another org's app: %s, want 400 on app_id", res)
	}
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Errorf("another org's requests changed stored rows:\nbefore %v\nafter  %v", before, after)
	}
	if n, c := len(e.ops.startedCommands()), e.ops.cancelledWorkflows(); n != 1 || len(c) != 0 {
		t.Errorf("another org's requests reached the workflows: %d started, cancelled %v", n, c)
	}

	// Its lists hold only its own things.
	var apps struct{ Apps []store.App }
	e.callAs(other, "GET", "/v1/apps", nil, 200, &apps)
	var installs struct{ Installs []installAnswer }
	e.callAs(other, "GET", "/v1/installs", nil, 200, &installs)
	e.callAs(other, "GET", "/v1/installs?app_id="+app.ID, nil, 200, &installs)
	if len(apps.Apps) != 0 || len(installs.Installs) != 0 {
		t.Errorf("another org lists apps %+v, installs %+v", apps.Apps, installs.Installs)
	}
	var runners struct{ Runners []wire.Runner }
	e.callAs(other, "GET", "/v1/runners", nil, 200, &runners)
	if len(runners.Runners) != 1 || runners.Runners[0].Kind != store.RunnerKindBuild || runners.Runners[0].ID == inst.Runner.ID {
		t.Errorf("another org lists runners %+v, want only its own build runner", runners.Runners)
	}
	var otherTokens struct{ Tokens []wire.Token }
	e.callAs(other, "GET", "/v1/tokens", nil, 200, &otherTokens)
	if len(otherTokens.Tokens) != 1 || otherTokens.Tokens[0].ID == tokens.Tokens[0].ID {
		t.Errorf("another org lists tokens %+v", otherTokens.Tokens)
	}

	// acme still has everything.
	e.call("GET", "/v1/apps/"+app.ID, nil, 200, nil)
	e.call("GET", "/v1/components/"+cmp.ID, nil, 200, nil)
	e.call("GET", "/v1/installs/"+inst.ID, nil, 200, nil)
	e.call("GET", "/v1/jobs/"+job.ID, nil, 200, nil)
	e.call("GET", "/v1/installs/"+inst.ID+"/commands/"+cmd.ID, nil, 200, nil)
	e.call("GET", "/v1/apps", nil, 200, &apps)
	if len(apps.Apps) != 1 {
		t.Errorf("acme lists %d apps", len(apps.Apps))
	}
}

// foreignCase is a request of another org on one of acme's objects.
type foreignCase struct {
	method, path string // %s is acme's ID, or a missing one
	id           string
	body         any
}

// checkForeignLikeMissing checks that each case, sent with the other org's
// token, answers 404 exactly as it does for an ID that does not exist.
func (e *testEnv) checkForeignLikeMissing(other string, cases []foreignCase) {
	e.t.Helper()
	for _, c := range cases {
		missing := missingID(c.id)
		foreign := e.send(c.method, strings.Replace(c.path, "%s", c.id, 1), other, c.body)
		absent := e.send(c.method, strings.Replace(c.path, "%s", missing, 1), other, c.body)
		if foreign.status != 404 {
			e.t.Errorf("%s %s with another org's token: %s, want 404", c.method, c.path, foreign)
			continue
		}
		if got, want := strings.ReplaceAll(string(foreign.body), c.id, "ID"), strings.ReplaceAll(string(absent.body), missing, "ID"); got != want {
			e.t.Errorf("%s %s: another org's object answers %s, a missing one %s", c.method, c.path, got, want)
		}
	}
}
