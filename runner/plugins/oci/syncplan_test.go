package oci_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/outpost-dev/outpost/protocol"
)

// syncPlan runs a sync_plan job that must succeed.
func syncPlan(t *testing.T, m protocol.OCIManifest) (protocol.OCISyncPlanOutputs, string) {
	t.Helper()
	m.Operation = protocol.OCISyncPlan
	j := mustRun(t, m)
	var plan protocol.OCISyncPlanOutputs
	if err := json.Unmarshal(j.outputs, &plan); err != nil {
		t.Fatalf("outputs %s: %v", j.outputs, err)
	}
	return plan, j.logs
}

// A sync's plan reads only the install's registry: nothing to do while it
// holds the image whole (the vendor's registry may be gone); the image's
// manifest or one of an index's platform manifests deleted there is what a
// sync would copy again, and it does.
func TestSyncPlanSaysWhatTheDestinationLacks(t *testing.T) {
	vendorSrv, vendorAccess := vendor(t)
	_, installAccess := install(t)
	img := must(random.Image(2048, 2))
	imgDigest := push(t, vendorAccess, "org_a/app_1/web", "b1", img).String()
	idx := must(random.Index(1024, 1, 2))
	idxDigest := push(t, vendorAccess, "org_a/app_1/web", "b2", idx).String()
	imgSync := syncManifest(vendorAccess, "org_a/app_1/web", imgDigest, installAccess, "b1")
	idxSync := syncManifest(vendorAccess, "org_a/app_1/web", idxDigest, installAccess, "b2")

	if plan, _ := syncPlan(t, imgSync); !plan.HasChanges || len(plan.Missing) != 1 || plan.Missing[0] != "manifest "+imgDigest {
		t.Fatalf("plan before any sync: %+v", plan)
	}
	mustRun(t, imgSync)
	mustRun(t, idxSync)
	vendorSrv.Close()
	for _, m := range []protocol.OCIManifest{imgSync, idxSync} {
		if plan, logs := syncPlan(t, m); plan.HasChanges || len(plan.Missing) != 0 || !strings.Contains(plan.Plan, "No changes") ||
			strings.Contains(logs, installAccess.Password) {
			t.Fatalf("plan of a synced artifact: %+v\n%s", plan, logs)
		}
	}

	// Deleted in the install's registry: the image, one platform of the index.
	opts := remoteOpts(installAccess)
	if err := remote.Delete(repoOf(t, installAccess, "web").Digest(imgDigest), opts...); err != nil {
		t.Fatal(err)
	}
	children, _ := idx.IndexManifest()
	child := children.Manifests[0].Digest.String()
	if err := remote.Delete(repoOf(t, installAccess, "web").Digest(child), opts...); err != nil {
		t.Fatal(err)
	}
	plan, _ := syncPlan(t, imgSync)
	if !plan.HasChanges || len(plan.Missing) != 1 || plan.Missing[0] != "manifest "+imgDigest ||
		!strings.Contains(plan.Plan, "no longer holds "+imgDigest+" whole: a sync copies it again") {
		t.Errorf("plan of a deleted image: %+v", plan)
	}
	if plan, _ := syncPlan(t, idxSync); !plan.HasChanges || len(plan.Missing) != 1 || plan.Missing[0] != "manifest "+child {
		t.Errorf("plan of an index that lost a platform: %+v", plan)
	}
}
