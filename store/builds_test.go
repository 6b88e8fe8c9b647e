package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// A build is keyed by its source: an unchanged component reuses its build, a
// changed one (or one whose builds all failed) gets a new one; a build ends
// once, and only a success names an artifact.
func TestBuildsAreQueuedOncePerSource(t *testing.T) {
	forEachFixture(t, func(t *testing.T, ctx context.Context, f fixture) {
		specs := []store.BuildSpec{{Component: "db", ComponentType: "terraform_module", SourceDigest: "sha256:aa"},
			{Component: "web", ComponentType: "helm_chart", SourceDigest: "sha256:bb"}}
		first, created, err := f.s.QueueBuilds(ctx, f.org.ID, f.inst.AppID, 1, specs)
		if err != nil || len(first) != 2 || !created[0] || !created[1] {
			t.Fatalf("first sync: %+v %v %v", first, created, err)
		}
		if first[0].Repository != f.org.ID+"/"+f.inst.AppID || first[0].Status != status.BuildQueued || first[0].Digest != "" {
			t.Errorf("queued build %+v", first[0])
		}

		// web changes; db does not.
		specs[1].SourceDigest = "sha256:cc"
		second, created, err := f.s.QueueBuilds(ctx, f.org.ID, f.inst.AppID, 2, specs)
		if err != nil || second[0].ID != first[0].ID || created[0] || second[1].ID == first[1].ID || !created[1] {
			t.Fatalf("second sync: %+v %v %v; want db's build kept, web's new", second, created, err)
		}

		// db's build fails: a later sync queues it again; FindBuild says why
		// there is nothing to deploy meanwhile.
		if err := f.s.FinishBuild(ctx, first[0].ID, nil, "no such image"); err != nil {
			t.Fatal(err)
		}
		if err := f.s.FinishBuild(ctx, first[0].ID, &store.BuildArtifact{Digest: "sha256:late"}, ""); err != nil {
			t.Fatal(err)
		}
		failed, _ := f.s.GetBuildByID(ctx, first[0].ID)
		if failed.Status != status.BuildFailed || failed.Digest != "" || failed.Error != "no such image" {
			t.Errorf("failed build %+v: a build ends once and a failure names no artifact", failed)
		}
		if _, err := f.s.FindBuild(ctx, f.inst.AppID, "db", "sha256:aa"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("find after failure: %v, want not found", err)
		}
		third, created, err := f.s.QueueBuilds(ctx, f.org.ID, f.inst.AppID, 3, specs[:1])
		if err != nil || !created[0] || third[0].ID == first[0].ID {
			t.Fatalf("resync after failure: %+v %v %v", third, created, err)
		}
		art := &store.BuildArtifact{Digest: "sha256:dd", MediaType: "application/vnd.oci.image.manifest.v1+json", Size: 42}
		if err := f.s.FinishBuild(ctx, third[0].ID, art, ""); err != nil {
			t.Fatal(err)
		}
		got, err := f.s.FindBuild(ctx, f.inst.AppID, "db", "sha256:aa")
		if err != nil || got.ID != third[0].ID || got.Digest != "sha256:dd" || got.Size != 42 {
			t.Errorf("find: %+v %v", got, err)
		}
		list, err := f.s.ListBuilds(ctx, f.org.ID, f.inst.AppID, store.BuildFilter{Component: "db"})
		if err != nil || len(list) != 2 {
			t.Errorf("builds of db: %d %v, want 2", len(list), err)
		}
		if _, err := f.s.GetBuild(ctx, "org_other", third[0].ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another org reads the build: %v", err)
		}
	})
}
