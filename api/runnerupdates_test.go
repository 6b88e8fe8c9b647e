package api

import (
	"context"
	"errors"
	"github.com/outpost-dev/outpost/api/wire"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// The runner version policy: the org's version, an install's own, a pin;
// bad input names its field and changes nothing.
func TestRunnerPolicyAndUpdateRefusals(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	_, inst := e.fixture()
	if _, err := e.store.PublishRunnerVersion(ctx, store.RunnerVersion{Version: "v1", Repository: "outpost/runner",
		Digest: "sha256:aa", BinaryDigest: "sha256:bb", Size: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.PublishRunnerVersion(ctx, store.RunnerVersion{Version: "v1", Repository: "outpost/runner",
		Digest: "sha256:cc", BinaryDigest: "sha256:dd"}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("publishing v1 again with another digest: %v, want a conflict", err)
	}
	policy := "/v1/installs/" + inst.ID + "/runner-policy"
	updates := "/v1/installs/" + inst.ID + "/runner-updates"
	for _, tc := range []struct {
		method, path string
		body         map[string]any
		status       int
		field        string
	}{
		{"PUT", "/v1/runner-policy", map[string]any{}, 400, "version"},
		{"PUT", "/v1/runner-policy", map[string]any{"version": "v9"}, 422, "version"},
		{"PUT", "/v1/runner-policy", map[string]any{"version": "v1", "pinned": true}, 400, "pinned"},
		{"PUT", policy, map[string]any{"version": "v9"}, 422, "version"},
		{"POST", updates, map[string]any{}, 400, "version"}, // no version wanted yet
		{"POST", updates, map[string]any{"version": "v9"}, 422, "version"},
		{"POST", updates, map[string]any{"version": "v1", "health_deadline_seconds": 1}, 400, "health_deadline_seconds"},
		{"POST", updates, map[string]any{"version": "v1", "drain_timeout_seconds": 90000}, 400, "drain_timeout_seconds"},
	} {
		var got protocol.Error
		e.call(tc.method, tc.path, tc.body, tc.status, &got)
		if got.Field != tc.field {
			t.Errorf("%s %s %v: field %q, want %q (%s)", tc.method, tc.path, tc.body, got.Field, tc.field, got.Message)
		}
	}

	var p wire.RunnerPolicy
	e.call("PUT", "/v1/runner-policy", map[string]any{"version": "v1"}, 200, &p)
	e.call("GET", policy, nil, 200, &p)
	if p.OrgVersion != "v1" || p.Target != "v1" || p.Pinned {
		t.Errorf("install policy after the org's = %+v, want target v1", p)
	}
	e.call("PUT", policy, map[string]any{"pinned": true}, 200, &p)
	if p.Target != "" || !p.Pinned || p.OrgVersion != "v1" {
		t.Errorf("pinned install policy = %+v, want no target", p)
	}
	var refused protocol.Error
	e.call("POST", updates, map[string]any{}, 409, &refused)
	if r, _ := e.store.GetInstallRunner(ctx, e.org.ID, inst.ID); r.ID != "" {
		if list, _ := e.store.ListRunnerUpdates(ctx, e.org.ID, r.ID, 10); len(list) != 0 {
			t.Errorf("refused updates were recorded: %+v", list)
		}
	}
}
