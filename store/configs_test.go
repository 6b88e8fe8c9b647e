package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/store"
)

func TestSyncAppConfig(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		app := f.inst.AppID

		if _, err := f.s.LatestAppConfig(ctx, f.org.ID, app); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("latest config of a never synced app: %v", err)
		}
		if v, err := f.s.LatestConfigVersion(ctx, f.org.ID, app); v != 0 || err != nil {
			t.Fatalf("latest version of a never synced app: %d, %v", v, err)
		}
		v1 := store.NewAppConfig{Archive: []byte("archive-1\x00binary"), Description: "from the config", Components: []store.ConfigComponent{
			{Name: "net", Type: contract.TypeTerraformModule, Config: store.JSONMap{"source": "modules/net"}},
			{Name: "db", Type: contract.TypeTerraformModule, Dependencies: []string{"net"}},
		}}
		ac := f.sync(t, app, v1, true, 1)
		cmps := appComponents(t, f, app)
		if len(cmps) != 2 || cmps["db"].Dependencies[0] != "net" || cmps["net"].Config["source"] != "modules/net" {
			t.Fatalf("components after v1 = %+v", cmps)
		}
		if a, _ := f.s.GetApp(ctx, f.org.ID, app); a.Description != "from the config" {
			t.Errorf("app description = %q", a.Description)
		}

		// The same archive again: no new version.
		if again := f.sync(t, app, v1, false, 1); again.ID != ac.ID {
			t.Fatalf("same sync again: %+v, want %s", again, ac.ID)
		}

		// v2: net goes, db changes in place, cache comes.
		v2 := store.NewAppConfig{Archive: []byte("archive-2"), Components: []store.ConfigComponent{
			{Name: "db", Type: contract.TypeTerraformModule, Config: store.JSONMap{"source": "modules/db2"}},
			{Name: "cache", Type: contract.TypeTerraformModule, Dependencies: []string{"db"}},
		}}
		f.sync(t, app, v2, true, 2)
		after := appComponents(t, f, app)
		if _, ok := after["net"]; ok || len(after) != 2 {
			t.Fatalf("components after v2 = %+v", after)
		}
		if after["db"].ID != cmps["db"].ID || after["db"].Config["source"] != "modules/db2" || len(after["db"].Dependencies) != 0 {
			t.Errorf("db after v2 = %+v (before %+v): want updated in place", after["db"], cmps["db"])
		}
		if a, _ := f.s.GetApp(ctx, f.org.ID, app); a.Description != "from the config" {
			t.Errorf("an empty description changed the app's: %q", a.Description)
		}

		latest, err := f.s.LatestAppConfig(ctx, f.org.ID, app)
		if err != nil || latest.Version != 2 {
			t.Fatalf("latest = %+v, %v", latest, err)
		}
		if v, err := f.s.LatestConfigVersion(ctx, f.org.ID, app); v != 2 || err != nil {
			t.Fatalf("latest version = %d, %v", v, err)
		}
		if b, err := latest.Archive(); err != nil || !bytes.Equal(b, v2.Archive) {
			t.Errorf("latest archive = %q, %v", b, err)
		}
		first, err := f.s.GetAppConfig(ctx, f.org.ID, app, 1)
		if b, _ := first.Archive(); err != nil || !bytes.Equal(b, v1.Archive) {
			t.Errorf("version 1 archive = %q, %v", b, err)
		}
		list, err := f.s.ListAppConfigs(ctx, f.org.ID, app)
		if err != nil || len(list) != 2 || list[0].Version != 2 || list[1].Version != 1 || list[0].Content != "" {
			t.Fatalf("list = %+v, %v", list, err)
		}
		if _, err := f.s.GetAppConfig(ctx, f.org.ID, app, 3); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("version 3: %v", err)
		}

		// Another org sees nothing and changes nothing.
		other, _, err := f.s.CreateOrg(ctx, "other")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.s.SyncAppConfig(ctx, other.ID, app, v1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("sync by another org: %v", err)
		}
		if _, err := f.s.LatestAppConfig(ctx, other.ID, app); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("latest by another org: %v", err)
		}
		if _, err := f.s.ListAppConfigs(ctx, other.ID, app); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("list by another org: %v", err)
		}
		if _, err := f.s.GetAppConfig(ctx, other.ID, app, 1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get by another org: %v", err)
		}
		if _, err := f.s.LatestConfigVersion(ctx, other.ID, app); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("latest version by another org: %v", err)
		}
		if latest, _ := f.s.LatestAppConfig(ctx, f.org.ID, app); latest.Version != 2 {
			t.Errorf("latest after another org's sync = %d", latest.Version)
		}
	})
}

// TestConcurrentSyncsGetDistinctVersions: syncs of one app at the same time
// are serialised, each getting its own version.
func TestConcurrentSyncsGetDistinctVersions(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		const n = 6
		var wg sync.WaitGroup
		versions := make([]int, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ac, _, err := f.s.SyncAppConfig(ctx, f.org.ID, f.inst.AppID, store.NewAppConfig{Archive: fmt.Appendf(nil, "archive-%d", i),
					Components: []store.ConfigComponent{{Name: fmt.Sprintf("c%d", i), Type: contract.TypeTerraformModule}}})
				versions[i], errs[i] = ac.Version, err
			}()
		}
		wg.Wait()
		seen := map[int]bool{}
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("sync %d: %v", i, errs[i])
			}
			seen[versions[i]] = true
		}
		if len(seen) != n || !seen[1] || !seen[n] {
			t.Fatalf("versions = %v", versions)
		}
		// The components are those of the last version stored.
		latest, _ := f.s.LatestAppConfig(ctx, f.org.ID, f.inst.AppID)
		b, _ := latest.Archive()
		var last int
		fmt.Sscanf(string(b), "archive-%d", &last)
		got := appComponents(t, f, f.inst.AppID)
		if want := []string{fmt.Sprintf("c%d", last)}; !reflect.DeepEqual(componentNames(got), want) {
			t.Fatalf("components = %v, want %v", componentNames(got), want)
		}
	})
}

// sync syncs cfg into the app; it must give version want, a new one if created.
func (f fixture) sync(t *testing.T, appID string, cfg store.NewAppConfig, created bool, want int) store.AppConfig {
	t.Helper()
	ac, gotCreated, err := f.s.SyncAppConfig(context.Background(), f.org.ID, appID, cfg)
	if err != nil || gotCreated != created || ac.Version != want {
		t.Fatalf("sync: %+v created=%v err=%v; want version %d created=%v", ac, gotCreated, err, want, created)
	}
	return ac
}

func appComponents(t *testing.T, f fixture, appID string) map[string]store.Component {
	t.Helper()
	list, err := f.s.ListComponents(context.Background(), f.org.ID, appID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.Component{}
	for _, c := range list {
		out[c.Name] = c
	}
	return out
}

func componentNames(m map[string]store.Component) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
