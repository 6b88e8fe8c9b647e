package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/outpost-dev/outpost/api/wire"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// syncAnswer is what a config sync answers, as far as builds go.
type syncAnswer struct {
	Version int
	Created *bool
	Builds  []wire.ConfigBuild
}

// exampleApp creates the app demo and syncs the example app's config to it,
// its builds made; it returns the app's ID.
func (e *testEnv) exampleApp() string {
	e.t.Helper()
	var app struct{ ID string }
	e.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 201, &app)
	e.syncBuilds(app.ID, exampleFiles(e.t), 201)
	return app.ID
}

func (e *testEnv) syncBuilds(appID string, files fstest.MapFS, want int) syncAnswer {
	e.t.Helper()
	var a syncAnswer
	res := e.postConfig(appID, "application/gzip", bytes.NewReader(tarGz(e.t, files)))
	if res.status != want {
		e.t.Fatalf("sync config: got %s, want %d", res, want)
	}
	if err := json.Unmarshal(res.body, &a); err != nil {
		e.t.Fatal(err)
	}
	return a
}

// byComponent indexes a sync's builds by component.
func byComponent(bs []wire.ConfigBuild) map[string]wire.ConfigBuild {
	out := map[string]wire.ConfigBuild{}
	for _, b := range bs {
		out[b.Component] = b
	}
	return out
}

func (e *testEnv) listBuilds(appID, query string) []store.Build {
	e.t.Helper()
	var list struct{ Builds []store.Build }
	e.call("GET", "/v1/apps/"+appID+"/builds"+query, nil, 200, &list)
	return list.Builds
}

func buildIDs(bs []store.Build) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.ID
	}
	return out
}

var demoComponents = []string{"api", "cache", "cluster", "database", "network", "web"}

// demoComponentTypes are the types of examples/demo-app's components.
var demoComponentTypes = map[string]string{
	"api":      "terraform_module",
	"cache":    "terraform_module",
	"cluster":  "terraform_module",
	"database": "terraform_module",
	"network":  "terraform_module",
	"web":      "helm_chart",
}

// TestSyncQueuesBuilds: the first version queues a build of every
// component; a later version queues builds only of the components whose
// source changed and reuses the others'; an identical sync, a change of
// variables only, or a refused config queues none.
func TestSyncQueuesBuilds(t *testing.T) {
	e := newTestEnv(t)
	app, _ := e.fixture()

	v1 := e.syncBuilds(app.ID, exampleFiles(t), 201)
	first := byComponent(v1.Builds)
	if got := slices.Sorted(maps.Keys(first)); !reflect.DeepEqual(got, demoComponents) || len(v1.Builds) != len(demoComponents) {
		t.Fatalf("version 1's builds: %+v", v1.Builds)
	}
	for _, b := range v1.Builds {
		if b.Reused || b.Status != string(status.BuildQueued) || b.ConfigVersion != 1 || b.ComponentType != demoComponentTypes[b.Component] ||
			!strings.HasPrefix(b.SourceDigest, "sha256:") || b.Digest != "" || b.WorkflowID != "app/"+app.ID+"/build/"+b.ID {
			t.Errorf("version 1's build of %s = %+v", b.Component, b)
		}
	}
	started := e.ops.startedBuilds()
	if len(started) != len(demoComponents) {
		t.Fatalf("started %d build workflows, want %d", len(started), len(demoComponents))
	}
	for _, b := range started {
		if first[b.Component].ID != b.ID || b.WorkflowID != first[b.Component].WorkflowID {
			t.Errorf("started %+v, the sync answered %+v", b, first[b.Component])
		}
	}

	// The same config again: every build is reused, none started.
	again := e.syncBuilds(app.ID, exampleFiles(t), 200)
	if again.Version != 1 || len(again.Builds) != len(demoComponents) {
		t.Fatalf("identical sync: %+v", again)
	}
	for _, b := range again.Builds {
		if !b.Reused || b.ID != first[b.Component].ID {
			t.Errorf("identical sync's build of %s = %+v, want version 1's, reused", b.Component, b)
		}
	}
	// A build still queued (none runs here) is started again — harmless,
	// its workflow ID names it — but no new build is.
	if n := len(distinctBuilds(e.ops.startedBuilds())); n != len(demoComponents) {
		t.Errorf("an identical sync started new builds: %d in all", n)
	}

	// The cache's module changes (and the api's variables): only the cache
	// is built again.
	files := exampleFiles(t)
	files["modules/cache/main.tf"] = &fstest.MapFile{Data: append(files["modules/cache/main.tf"].Data, "\n# tuned\n"...), Mode: 0o644}
	replaceIn(t, files, "components/cache.toml", "memory_mb = 256", "memory_mb = 512")
	v2 := e.syncBuilds(app.ID, files, 201)
	second := byComponent(v2.Builds)
	if v2.Version != 2 || len(v2.Builds) != len(demoComponents) {
		t.Fatalf("version 2: %+v", v2)
	}
	for _, name := range demoComponents {
		b := second[name]
		if name == "cache" {
			if b.Reused || b.ID == first[name].ID || b.ConfigVersion != 2 || b.SourceDigest == first[name].SourceDigest || b.Status != string(status.BuildQueued) {
				t.Errorf("version 2's cache build = %+v, want a new one (version 1's: %+v)", b, first[name])
			}
			continue
		}
		if !b.Reused || b.ID != first[name].ID || b.ConfigVersion != 1 {
			t.Errorf("version 2's build of %s = %+v, want version 1's reused", name, b)
		}
	}
	if ids := distinctBuilds(e.ops.startedBuilds()); len(ids) != len(demoComponents)+1 || !ids[second["cache"].ID] {
		t.Errorf("after version 2, started %v; want version 1's builds and the new cache build", ids)
	}

	// Variables only: a new version, no new build.
	replaceIn(t, files, "components/cache.toml", "memory_mb = 512", "memory_mb = 1024")
	v3 := e.syncBuilds(app.ID, files, 201)
	if v3.Version != 3 {
		t.Fatalf("version 3: %+v", v3)
	}
	for _, b := range v3.Builds {
		if !b.Reused || b.ID != second[b.Component].ID {
			t.Errorf("version 3's build of %s = %+v, want version 2's", b.Component, b)
		}
	}

	// A refused config queues nothing.
	bad := exampleFiles(t)
	bad["modules/api/main.tf"] = &fstest.MapFile{Data: append(bad["modules/api/main.tf"].Data, "\n# changed\n"...), Mode: 0o644}
	replaceIn(t, bad, "components/cache.toml", "source =", "sorce = \"x\"\nsource =")
	before := e.snapshot()
	if res := e.postConfig(app.ID, "application/gzip", bytes.NewReader(tarGz(t, bad))); res.status != 422 {
		t.Fatalf("invalid config: %s", res)
	}
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Error("a refused config changed the database")
	}
	if n := len(distinctBuilds(e.ops.startedBuilds())); n != len(demoComponents)+1 {
		t.Errorf("a refused config started new builds: %d in all", n)
	}

	// Listing: every build, newest first; by component; by config version
	// (the builds it uses, reused ones included).
	all := e.listBuilds(app.ID, "")
	if len(all) != len(demoComponents)+1 || all[0].ID != second["cache"].ID {
		t.Errorf("builds = %v, want %d, the newest first", buildIDs(all), len(demoComponents)+1)
	}
	if got := e.listBuilds(app.ID, "?component=cache"); !reflect.DeepEqual(buildIDs(got), []string{second["cache"].ID, first["cache"].ID}) {
		t.Errorf("cache's builds = %v", buildIDs(got))
	}
	if got := e.listBuilds(app.ID, "?component=queue"); len(got) != 0 {
		t.Errorf("builds of a component that does not exist = %v", buildIDs(got))
	}
	uses := func(query string, want map[string]wire.ConfigBuild) {
		t.Helper()
		got := map[string]string{}
		for _, b := range e.listBuilds(app.ID, query) {
			got[b.Component] = b.ID
		}
		wantIDs := map[string]string{}
		for name, b := range want {
			wantIDs[name] = b.ID
		}
		if !reflect.DeepEqual(got, wantIDs) {
			t.Errorf("builds%s = %v, want %v", query, got, wantIDs)
		}
	}
	uses("?config_version=1", first)
	uses("?config_version=2", second)
	uses("?config_version=latest", second)
	uses("?config_version=2&component=cache", map[string]wire.ConfigBuild{"cache": second["cache"]})
	uses("?config_version=1&component=cache", map[string]wire.ConfigBuild{"cache": first["cache"]})
	for _, q := range []string{"?config_version=two", "?config_version=0", "?config_version=-1", "?config_version=9"} {
		res := e.send("GET", "/v1/apps/"+app.ID+"/builds"+q, e.token, nil)
		if res.status != 400 || res.apiError(t).Field != "config_version" {
			t.Errorf("builds%s: %s, want 400 naming config_version", q, res)
		}
	}
}

// TestBuildArtifact: a build shows its artifact once it succeeded, its
// error once it failed, and never anything else (no credentials).
func TestBuildArtifact(t *testing.T) {
	e := newTestEnv(t)
	app, _ := e.fixture()
	builds := byComponent(e.syncBuilds(app.ID, exampleFiles(t), 201).Builds)
	ctx := context.Background()

	db := builds["database"]
	if err := e.store.StartBuild(ctx, db.ID, "job_0000000000000001"); err != nil {
		t.Fatal(err)
	}
	var running store.Build
	e.call("GET", "/v1/apps/"+app.ID+"/builds/"+db.ID, nil, 200, &running)
	if running.Status != status.BuildRunning || running.JobID == nil || *running.JobID != "job_0000000000000001" || running.Digest != "" {
		t.Errorf("running build = %+v", running)
	}
	art := store.BuildArtifact{Digest: "sha256:" + strings.Repeat("ab", 32), MediaType: "application/vnd.oci.image.manifest.v1+json",
		ArtifactType: "application/vnd.outpost.terraform-module.v1", Size: 1234}
	if err := e.store.FinishBuild(ctx, db.ID, &art, ""); err != nil {
		t.Fatal(err)
	}
	res := e.call("GET", "/v1/apps/"+app.ID+"/builds/"+db.ID, nil, 200, nil)
	var shown map[string]any
	if err := json.Unmarshal(res.body, &shown); err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{"app_id", "artifact_type", "component", "component_type", "config_version", "created_at", "digest",
		"finished_at", "id", "job_id", "media_type", "repository", "size", "source_digest", "status", "tag", "workflow_id"}
	if got := slices.Sorted(maps.Keys(shown)); !reflect.DeepEqual(got, wantKeys) {
		t.Errorf("a build shows %v, want exactly %v", got, wantKeys)
	}
	var done store.Build
	json.Unmarshal(res.body, &done)
	if done.Status != status.BuildSucceeded || done.Digest != art.Digest || done.MediaType != art.MediaType ||
		done.ArtifactType != art.ArtifactType || done.Size != art.Size || done.FinishedAt == nil ||
		done.Repository != e.org.ID+"/"+app.ID || !strings.HasPrefix(done.Tag, "database.") || done.AppID != app.ID {
		t.Errorf("succeeded build = %+v", done)
	}
	// The sync shows the artifact's digest once it is known.
	again := byComponent(e.syncBuilds(app.ID, exampleFiles(t), 200).Builds)
	if b := again["database"]; b.Digest != art.Digest || b.Status != string(status.BuildSucceeded) || !b.Reused {
		t.Errorf("sync's database build after success = %+v", b)
	}

	if err := e.store.FinishBuild(ctx, builds["cache"].ID, nil, "terraform module: no .tf files"); err != nil {
		t.Fatal(err)
	}
	var failed store.Build
	e.call("GET", "/v1/apps/"+app.ID+"/builds/"+builds["cache"].ID, nil, 200, &failed)
	if failed.Status != status.BuildFailed || failed.Error != "terraform module: no .tf files" || failed.Digest != "" {
		t.Errorf("failed build = %+v", failed)
	}
	// The version's list shows the failure (there is no other build of that
	// source).
	for _, b := range e.listBuilds(app.ID, "?config_version=1&component=cache") {
		if b.ID != failed.ID || b.Status != status.BuildFailed {
			t.Errorf("version 1's cache build = %+v, want the failed one", b)
		}
	}

	// Another app's build, through this app's path, is not found.
	var other store.App
	e.call("POST", "/v1/apps", map[string]any{"name": "other"}, 201, &other)
	e.call("GET", "/v1/apps/"+other.ID+"/builds/"+db.ID, nil, 404, nil)
	e.call("GET", "/v1/apps/"+app.ID+"/builds/bld_0000000000000000", nil, 404, nil)
	if got := e.listBuilds(other.ID, ""); len(got) != 0 {
		t.Errorf("an app without builds lists %v", buildIDs(got))
	}
}

// TestSyncBuildStartFails: a build whose workflow cannot start is marked
// failed, not left queued, and the sync answers 503; the config version
// stays stored, and syncing again queues the builds again.
func TestSyncBuildStartFails(t *testing.T) {
	e := newTestEnv(t)
	app, _ := e.fixture()
	e.ops.failBuildStarts(errors.New("dial tcp 10.0.0.7:7233: connection refused"))

	res := e.postConfig(app.ID, "application/gzip", bytes.NewReader(tarGz(t, exampleFiles(t))))
	if res.status != 503 {
		t.Fatalf("sync with the workflow service down: %s, want 503", res)
	}
	msg := res.apiError(t).Message
	if !strings.Contains(msg, "config version 1 is stored") || !strings.Contains(msg, "could not be started") ||
		!strings.Contains(msg, "network") || strings.Contains(msg, "10.0.0.7") {
		t.Errorf("503 message = %q", msg)
	}
	var latest wire.SyncedAppConfig
	e.call("GET", "/v1/apps/"+app.ID+"/configs/latest", nil, 200, &latest)
	if latest.Version != 1 {
		t.Errorf("latest config = %d", latest.Version)
	}
	all := e.listBuilds(app.ID, "")
	var failedComponents []string
	for _, b := range all {
		failedComponents = append(failedComponents, b.Component)
	}
	if slices.Sort(failedComponents); !reflect.DeepEqual(failedComponents, demoComponents) {
		t.Fatalf("builds after the failed sync: %+v", all)
	}
	for _, b := range all {
		if b.Status != status.BuildFailed || b.ComponentType != demoComponentTypes[b.Component] || !strings.HasPrefix(b.Error, "could not start its workflow") || b.FinishedAt == nil {
			t.Errorf("build of %s = %+v, want failed, saying its workflow could not start", b.Component, b)
		}
	}

	// The service is back: the same config again queues new builds.
	e.ops.failBuildStarts(nil)
	again := e.syncBuilds(app.ID, exampleFiles(t), 200)
	if len(again.Builds) != len(demoComponents) {
		t.Fatalf("second sync: %+v", again)
	}
	for _, b := range again.Builds {
		if b.Reused || b.Status != string(status.BuildQueued) || slices.Contains(buildIDs(all), b.ID) {
			t.Errorf("second sync's build of %s = %+v, want a new one", b.Component, b)
		}
	}
	if n := len(e.ops.startedBuilds()); n != len(demoComponents) {
		t.Errorf("started %d build workflows, want %d", n, len(demoComponents))
	}
}

// TestSyncWithoutOps: a server without a workflow service stores the config
// but cannot queue its builds, and says so.
func TestSyncWithoutOps(t *testing.T) {
	e := newTestEnvWithOps(t, nil)
	var app store.App
	e.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 201, &app)
	res := e.postConfig(app.ID, "application/gzip", bytes.NewReader(tarGz(t, exampleFiles(t))))
	if res.status != 503 || !strings.Contains(res.apiError(t).Message, "config version 1 is stored") {
		t.Fatalf("sync without ops: %s", res)
	}
	if got := e.listBuilds(app.ID, ""); len(got) != 0 {
		t.Errorf("builds queued without a workflow service: %v", buildIDs(got))
	}
}

// TestRebuild: a component's build that succeeded or is under way is
// answered as it is; only a component whose builds failed is built again.
func TestRebuild(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	var app store.App
	e.call("POST", "/v1/apps", map[string]any{"name": "demo"}, 201, &app)
	rebuild := func(body any, want int) store.Build {
		t.Helper()
		var b store.Build
		e.call("POST", "/v1/apps/"+app.ID+"/builds", body, want, &b)
		return b
	}
	res := e.send("POST", "/v1/apps/"+app.ID+"/builds", e.token, map[string]any{"component": "cache"})
	if res.status != 409 || !strings.Contains(res.apiError(t).Message, "no config yet") {
		t.Errorf("rebuild before any config: %s, want 409", res)
	}
	builds := byComponent(e.syncBuilds(app.ID, exampleFiles(t), 201).Builds)
	cache := builds["cache"].ID

	// Queued, running, succeeded: the same build, 200, nothing started.
	if b := rebuild(map[string]any{"component": "cache"}, 200); b.ID != cache || b.Status != status.BuildQueued {
		t.Errorf("rebuild of a queued build = %+v", b)
	}
	if err := e.store.StartBuild(ctx, cache, "job_0000000000000001"); err != nil {
		t.Fatal(err)
	}
	if b := rebuild(map[string]any{"component": "cache"}, 200); b.ID != cache || b.Status != status.BuildRunning {
		t.Errorf("rebuild of a running build = %+v", b)
	}
	if err := e.store.FinishBuild(ctx, cache, &store.BuildArtifact{Digest: "sha256:" + strings.Repeat("cd", 32), Size: 10}, ""); err != nil {
		t.Fatal(err)
	}
	if b := rebuild(map[string]any{"component": "cache"}, 200); b.ID != cache || b.Status != status.BuildSucceeded {
		t.Errorf("rebuild of a succeeded build = %+v", b)
	}
	// (The queued one is started again — harmless, its workflow ID names it.)
	if n := len(distinctBuilds(e.ops.startedBuilds())); n != len(demoComponents) {
		t.Errorf("rebuilds of good builds started new builds: %d in all", n)
	}

	// Failed: built again, 202, its workflow started.
	if err := e.store.FinishBuild(ctx, builds["database"].ID, nil, "push refused"); err != nil {
		t.Fatal(err)
	}
	b := rebuild(map[string]any{"component": "database"}, 202)
	if b.ID == builds["database"].ID || b.Status != status.BuildQueued || b.SourceDigest != builds["database"].SourceDigest || b.ConfigVersion != 1 {
		t.Errorf("rebuild of a failed build = %+v", b)
	}
	if s := e.ops.startedBuilds(); len(distinctBuilds(s)) != len(demoComponents)+1 || s[len(s)-1].ID != b.ID {
		t.Errorf("started builds %+v, want the rebuild last", s)
	}
	// Now the version uses the new one.
	if got := e.listBuilds(app.ID, "?config_version=latest&component=database"); len(got) != 1 || got[0].ID != b.ID {
		t.Errorf("version 1's database build = %v, want %s", buildIDs(got), b.ID)
	}

	// A rebuild whose workflow cannot start is failed, not left queued.
	if err := e.store.FinishBuild(ctx, builds["network"].ID, nil, "push refused"); err != nil {
		t.Fatal(err)
	}
	e.ops.failBuildStarts(errors.New("connection refused"))
	res = e.send("POST", "/v1/apps/"+app.ID+"/builds", e.token, map[string]any{"component": "network"})
	if res.status != 503 || !strings.Contains(res.apiError(t).Message, "network") {
		t.Errorf("rebuild with the workflow service down: %s, want 503", res)
	}
	e.ops.failBuildStarts(nil)
	network := e.listBuilds(app.ID, "?component=network")
	if len(network) != 2 || network[0].Status != status.BuildFailed || !strings.HasPrefix(network[0].Error, "could not start its workflow") {
		t.Errorf("network's builds after a failed start = %+v", network)
	}

	// Bad requests.
	before := e.snapshot()
	for _, tc := range []struct {
		body   any
		status int
		field  string
	}{
		{map[string]any{"component": "queue"}, 422, "component"},
		{map[string]any{}, 400, "component"},
		{nil, 400, "component"},
		{map[string]any{"component": 7}, 400, "component"},
		{map[string]any{"component": "cache", "force": true}, 400, "force"},
	} {
		res := e.send("POST", "/v1/apps/"+app.ID+"/builds", e.token, tc.body)
		if res.status != tc.status || res.apiError(t).Field != tc.field {
			t.Errorf("rebuild %v: %s, want %d naming %s", tc.body, res, tc.status, tc.field)
		}
	}
	if !strings.Contains(e.send("POST", "/v1/apps/"+app.ID+"/builds", e.token, map[string]any{"component": "queue"}).apiError(t).Message,
		strings.Join(demoComponents, ", ")) {
		t.Error("an unknown component's 422 does not list the components")
	}
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Error("a refused rebuild changed the database")
	}
}

// TestInstallComponents: which build each of an install's components runs.
func TestInstallComponents(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	app, inst := e.fixture()
	var list struct{ Components []store.InstallComponent }
	res := e.call("GET", "/v1/installs/"+inst.ID+"/components", nil, 200, &list)
	if !strings.Contains(string(res.body), `"components":[]`) {
		t.Errorf("a new install's components = %s, want an empty list", res.body)
	}
	builds := byComponent(e.syncBuilds(app.ID, exampleFiles(t), 201).Builds)
	for _, name := range []string{"network", "database"} {
		if err := e.store.SetInstallComponent(ctx, store.InstallComponent{InstallID: inst.ID, Component: name,
			BuildID: builds[name].ID, Digest: "sha256:" + strings.Repeat("0"+name[:1], 32),
			Reference: "registry.customer.internal/demo/" + name + "@sha256:" + strings.Repeat("0"+name[:1], 32)}); err != nil {
			t.Fatal(err)
		}
	}
	res = e.call("GET", "/v1/installs/"+inst.ID+"/components", nil, 200, &list)
	if len(list.Components) != 2 || list.Components[0].Component != "database" || list.Components[1].Component != "network" {
		t.Fatalf("install components = %s", res.body)
	}
	for _, ic := range list.Components {
		if ic.BuildID != builds[ic.Component].ID || !strings.HasPrefix(ic.Digest, "sha256:") ||
			!strings.HasSuffix(ic.Reference, "@"+ic.Digest) || ic.UpdatedAt.IsZero() {
			t.Errorf("install component = %+v", ic)
		}
	}
	var shown struct{ Components []map[string]any }
	json.Unmarshal(res.body, &shown)
	if got := slices.Sorted(maps.Keys(shown.Components[0])); !reflect.DeepEqual(got, []string{"build_id", "component", "config_version", "digest", "reference", "updated_at"}) {
		t.Errorf("an install component shows %v", got)
	}
}

// TestBuildRoutesIsolated: another org's app, build or install is not found,
// exactly like a missing one, and its requests change nothing.
func TestBuildRoutesIsolated(t *testing.T) {
	e := newTestEnv(t)
	app, inst := e.fixture()
	builds := byComponent(e.syncBuilds(app.ID, exampleFiles(t), 201).Builds)
	if err := e.store.SetInstallComponent(context.Background(), store.InstallComponent{InstallID: inst.ID, Component: "network",
		BuildID: builds["network"].ID, Digest: "sha256:00", Reference: "r@sha256:00"}); err != nil {
		t.Fatal(err)
	}
	_, other, err := e.store.CreateOrg(context.Background(), "globex")
	if err != nil {
		t.Fatal(err)
	}
	bld := builds["network"].ID
	before := e.snapshot()
	e.checkForeignLikeMissing(other, []foreignCase{
		{"GET", "/v1/apps/%s/builds", app.ID, nil},
		{"GET", "/v1/apps/%s/builds?config_version=1", app.ID, nil},
		{"POST", "/v1/apps/%s/builds", app.ID, map[string]any{"component": "network"}},
		{"GET", "/v1/apps/%s/builds/" + bld, app.ID, nil},
		{"GET", "/v1/apps/" + app.ID + "/builds/%s", bld, nil},
		{"GET", "/v1/installs/%s/components", inst.ID, nil},
	})
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Error("another org's requests changed stored rows")
	}
	if n := len(e.ops.startedBuilds()); n != len(demoComponents) {
		t.Errorf("another org's requests started builds: %d in all", n)
	}
}

// TestBuildRoutesDocumented: the rebuild route documents both of its
// successes, and the sync its builds and its 503.
func TestBuildRoutesDocumented(t *testing.T) {
	e := newTestEnv(t)
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					}
				}
			}
		}
	}
	e.call("GET", "/v1/openapi.json", nil, 200, &doc)
	schema := func(path, method, status string) string {
		r, ok := doc.Paths[path][method].Responses[status]
		if !ok {
			t.Errorf("%s %s does not document %s", method, path, status)
		}
		return r.Content["application/json"].Schema.Ref
	}
	for _, status := range []string{"200", "202"} {
		if got := schema("/v1/apps/{id}/builds", "post", status); got != "#/components/schemas/Build" {
			t.Errorf("rebuild %s schema = %q", status, got)
		}
	}
	for _, status := range []string{"422", "503", "404", "400"} {
		schema("/v1/apps/{id}/builds", "post", status)
	}
	if got := schema("/v1/apps/{id}/configs", "post", "201"); got != "#/components/schemas/SyncedAppConfig" {
		t.Errorf("sync 201 schema = %q", got)
	}
	schema("/v1/apps/{id}/configs", "post", "503")
	schema("/v1/apps/{id}/builds", "get", "400")
	schema("/v1/apps/{id}/builds/{build_id}", "get", "404")
	schema("/v1/installs/{id}/components", "get", "200")
}

// distinctBuilds is the set of the builds' IDs.
func distinctBuilds(builds []store.Build) map[string]bool {
	ids := map[string]bool{}
	for _, b := range builds {
		ids[b.ID] = true
	}
	return ids
}
