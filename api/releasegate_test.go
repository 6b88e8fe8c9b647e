package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// A release's health gate: a bad soak or on_unhealthy is a 400 naming the
// field; the release shows its soak and on_unhealthy (halt by default with
// a soak, none without), and a health halt's reason and its installs'
// states. (The gate itself runs in the Release workflow: package workflows
// and e2e.)
func TestReleaseHealthGateFields(t *testing.T) {
	e := newTestEnv(t)
	app, inst := e.fixture()
	e.syncBuilds(app.ID, exampleFiles(t), 201)
	e.call("PATCH", "/v1/installs/"+inst.ID+"/inputs", map[string]any{"set": []map[string]any{
		{"name": "db_password", "value": "pw", "sensitive": true}}}, 200, nil)
	path := "/v1/apps/" + app.ID + "/releases"
	all := map[string]any{"all": true}
	for _, tc := range []struct {
		body        map[string]any
		field, says string
	}{
		{map[string]any{"installs": all, "soak": "soon"}, "soak", `"soon" is not a duration`},
		{map[string]any{"installs": all, "soak": "-2m"}, "soak", `"-2m" is not a duration`},
		{map[string]any{"installs": all, "soak": "2m", "on_unhealthy": "retry"}, "on_unhealthy", `"retry": want halt or rollback`},
		{map[string]any{"installs": all, "on_unhealthy": "rollback"}, "on_unhealthy", "needs a soak"},
	} {
		res := e.call("POST", path, tc.body, 400, nil)
		var got struct{ Field, Message string }
		_ = json.Unmarshal(res.body, &got)
		if got.Field != tc.field || !strings.Contains(got.Message, tc.says) {
			t.Errorf("release %v = %s, want %s saying %q", tc.body, res, tc.field, tc.says)
		}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		body             map[string]any
		soak, onUnhealth string
	}{
		{map[string]any{"installs": all, "soak": "2m", "on_unhealthy": "rollback"}, "2m0s", "rollback"},
		{map[string]any{"installs": all, "soak": "90s"}, "1m30s", "halt"},
		{map[string]any{"installs": all}, "0s", ""},
	} {
		var r wire.Release
		e.call("POST", path, tc.body, 202, &r)
		var got wire.Release
		e.call("GET", path+"/"+r.ID, nil, 200, &got)
		if r.Soak != tc.soak || r.OnUnhealthy != tc.onUnhealth || got.Soak != tc.soak || got.OnUnhealthy != tc.onUnhealth {
			t.Errorf("release %v: soak %q/%q, on_unhealthy %q/%q (created/read), want %q, %q", tc.body, r.Soak, got.Soak,
				r.OnUnhealthy, got.OnUnhealthy, tc.soak, tc.onUnhealth)
		}
		// the workflow's part: the health gate halts it, naming the install
		why := "install customer-1 is unhealthy 30s into the 2m0s soak: web: Deployment/default/web: Available=False"
		if err := e.store.UpdateReleaseInstall(ctx, r.ID, inst.ID, store.ReleaseInstallChange{Status: status.ReleaseInstallUnhealthy, Error: &why}); err != nil {
			t.Fatal(err)
		}
		if err := e.store.SetReleaseStatus(ctx, r.ID, status.ReleaseHalted, why); err != nil {
			t.Fatal(err)
		}
		e.call("GET", path+"/"+r.ID, nil, 200, &got)
		if got.Status != "halted" || got.Error != why || got.Batches[0].Installs[0].Status != "unhealthy" ||
			got.Batches[0].Progress[0] != "customer-1: unhealthy: "+why {
			t.Errorf("halted release = %+v, want halted with %q", got, why)
		}
		if err := e.store.SetReleaseStatus(ctx, r.ID, status.ReleaseCancelled, ""); err != nil {
			t.Fatal(err)
		}
	}
}
