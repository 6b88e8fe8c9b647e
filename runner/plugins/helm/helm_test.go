package helm_test

import (
	"context"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins/helm"
)

func TestDeployPlanUpgradeAndUninstall(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const ns, name = "shop-lifecycle", "shop"
	job := func(op string, v map[string]any) protocol.HelmManifest {
		m := e.manifest(op, ns, name)
		m.CreateNamespace = true
		m.ChartArchive = chartArchive(t, "shop", shop)
		m.ValuesFiles = []string{"image: registry.example/shop:1.5\nreplicas: 3\n"}
		m.Values = valuesJSON(t, v)
		return m
	}
	v1 := map[string]any{"greeting": "hello from outpost", "replicas": 2}

	// A plan before anything is deployed: an install, all objects added.
	plan, _ := succeed[protocol.HelmPlanOutputs](t, job(protocol.HelmPlan, v1))
	if !plan.HasChanges || !plan.Install || plan.Revision != 0 || len(plan.Added) != 2 || len(plan.Changed)+len(plan.Removed) != 0 {
		t.Errorf("plan of a new release: %+v; want an install adding 2 objects", plan)
	}
	if !strings.Contains(plan.Diff, "--- /dev/null\n+++ b/ConfigMap/shop-lifecycle/shop-settings\n") ||
		!strings.Contains(plan.Diff, "+  greeting: hello from outpost\n") {
		t.Errorf("plan diff of a new release:\n%s", plan.Diff)
	}
	if rels := e.releases(ns); len(rels) != 0 {
		t.Fatalf("a plan installed something: %s", describe(rels))
	}

	// Deploy: revision 1, with the values (values object over values files
	// over the chart's values.yaml).
	rel, logs := succeed[protocol.HelmReleaseOutputs](t, job(protocol.HelmDeploy, v1))
	want := []protocol.HelmObject{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "shop-settings"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "shop"},
	}
	if rel.Release != name || rel.Namespace != ns || rel.Revision != 1 || rel.Status != "deployed" ||
		rel.Chart != "shop-0.1.0" || rel.AppVersion != "1.4" || !sameObjects(rel.Objects, want) {
		t.Errorf("deploy: %+v; want revision 1 deployed with %v", rel, want)
	}
	if rel.Notes != "The shop shop says hello from outpost.\n" {
		t.Errorf("notes: %q", rel.Notes)
	}
	if !strings.Contains(logs, "outpost: release shop revision 1 deployed") {
		t.Errorf("deploy logs:\n%s", logs)
	}
	e.onlyRelease(ns, name, 1, release.StatusDeployed)
	if got := e.configMap(ns, "shop-settings"); got["greeting"] != "hello from outpost" {
		t.Errorf("ConfigMap data %v", got)
	}
	dep, err := e.cs.AppsV1().Deployments(ns).Get(ctx, "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *dep.Spec.Replicas != 2 || dep.Spec.Template.Spec.Containers[0].Image != "registry.example/shop:1.5" {
		t.Errorf("Deployment: replicas %d, image %s; want 2 and the values file's image", *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image)
	}

	// The same values again: nothing to do.
	plan, _ = succeed[protocol.HelmPlanOutputs](t, job(protocol.HelmPlan, v1))
	if plan.HasChanges || plan.Install || plan.Revision != 1 || plan.Diff != "" || len(plan.Added)+len(plan.Changed)+len(plan.Removed) != 0 {
		t.Errorf("plan without a change: %+v", plan)
	}

	// A changed value: the ConfigMap changes, and only it.
	v2 := map[string]any{"greeting": "bonjour", "replicas": 2}
	plan, _ = succeed[protocol.HelmPlanOutputs](t, job(protocol.HelmPlan, v2))
	if !plan.HasChanges || plan.Install || len(plan.Changed) != 1 || plan.Changed[0].Name != "shop-settings" || len(plan.Added)+len(plan.Removed) != 0 {
		t.Errorf("plan with a change: %+v", plan)
	}
	for _, s := range []string{"--- a/ConfigMap/shop-lifecycle/shop-settings\n+++ b/ConfigMap/shop-lifecycle/shop-settings\n",
		"-  greeting: hello from outpost\n", "+  greeting: bonjour\n"} {
		if !strings.Contains(plan.Diff, s) {
			t.Errorf("plan diff lacks %q:\n%s", s, plan.Diff)
		}
	}
	if got := e.configMap(ns, "shop-settings"); got["greeting"] != "hello from outpost" {
		t.Errorf("the plan changed the ConfigMap: %v", got)
	}
	rel, _ = succeed[protocol.HelmReleaseOutputs](t, job(protocol.HelmDeploy, v2))
	if rel.Revision != 2 || rel.Status != "deployed" {
		t.Errorf("upgrade: %+v; want revision 2 deployed", rel)
	}
	e.onlyRelease(ns, name, 2, release.StatusDeployed)
	if got := e.configMap(ns, "shop-settings"); got["greeting"] != "bonjour" {
		t.Errorf("ConfigMap after the upgrade: %v", got)
	}

	// Objects come and go; a Secret's values never show.
	v3 := map[string]any{"greeting": "bonjour", "replicas": 2, "password": "first-Secret-value", "extraConfigMaps": []string{"shop-extra"}}
	succeed[protocol.HelmReleaseOutputs](t, job(protocol.HelmDeploy, v3))
	v4 := map[string]any{"greeting": "bonjour", "replicas": 2, "password": "second-Secret-value"}
	plan, logs = succeed[protocol.HelmPlanOutputs](t, job(protocol.HelmPlan, v4))
	if len(plan.Changed) != 1 || plan.Changed[0].Kind != "Secret" || len(plan.Removed) != 1 || plan.Removed[0].Name != "shop-extra" {
		t.Errorf("plan: changed %v, removed %v; want the Secret changed and shop-extra removed", plan.Changed, plan.Removed)
	}
	if !strings.Contains(plan.Diff, "+  password: "+helm.RedactedChanged+"\n") || !strings.Contains(plan.Diff, "+++ /dev/null\n") {
		t.Errorf("plan diff:\n%s", plan.Diff)
	}
	if s := plan.Diff + logs; strings.Contains(s, "Secret-value") {
		t.Errorf("the plan shows a Secret's value:\n%s", s)
	}

	// A value the control plane marks sensitive shows nowhere.
	m := job(protocol.HelmPlan, map[string]any{"greeting": "a-Sensitive-greeting", "replicas": 2, "password": "second-Secret-value"})
	m.SensitiveValues = []string{"values.greeting"}
	plan, logs = succeed[protocol.HelmPlanOutputs](t, m)
	if !strings.Contains(plan.Diff, "+  greeting: "+helm.Redacted+"\n") || strings.Contains(plan.Diff+logs, "a-Sensitive-greeting") {
		t.Errorf("plan of a sensitive value:\n%s\nlogs:\n%s", plan.Diff, logs)
	}
	m.Operation = protocol.HelmDeploy
	if rel, logs := succeed[protocol.HelmReleaseOutputs](t, m); rel.Notes != "The shop shop says "+helm.Redacted+".\n" || strings.Contains(logs, "a-Sensitive-greeting") {
		t.Errorf("notes of a sensitive value: %q\n%s", rel.Notes, logs)
	}

	// Uninstall: the release and its objects go; again, nothing to do.
	un, _ := succeed[protocol.HelmUninstallOutputs](t, e.manifest(protocol.HelmUninstall, ns, name))
	if !un.Uninstalled || len(un.Objects) != 3 {
		t.Errorf("uninstall: %+v; want 3 objects removed", un)
	}
	e.checkNothingLeft(ns, "the uninstall", "shop-settings", "shop-extra")
	if _, err := e.cs.AppsV1().Deployments(ns).Get(ctx, "shop", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment after the uninstall: %v; want not found", err)
	}
	un, logs = succeed[protocol.HelmUninstallOutputs](t, e.manifest(protocol.HelmUninstall, ns, name))
	if un.Uninstalled || !strings.Contains(logs, "nothing to uninstall") {
		t.Errorf("second uninstall: %+v\n%s", un, logs)
	}
	// Of a release in a namespace that does not exist either.
	if un, _ := succeed[protocol.HelmUninstallOutputs](t, e.manifest(protocol.HelmUninstall, "never-created", name)); un.Uninstalled {
		t.Errorf("uninstall in a missing namespace: %+v", un)
	}
}

func TestBrokenTemplateLeavesNoRelease(t *testing.T) {
	e := newEnv(t)
	const ns, name = "shop-broken", "shop"
	e.createNamespace(ns)
	job := func(op string, files map[string]string, greeting string) protocol.HelmManifest {
		m := e.manifest(op, ns, name)
		m.ChartArchive = chartArchive(t, "shop", files)
		m.Values = valuesJSON(t, map[string]any{"greeting": greeting})
		return m
	}
	const helmMessage = `parse error at (shop/templates/broken.yaml:3): function "nope" not defined`

	msg, _ := fail(t, job(protocol.HelmDeploy, broken, "v1"))
	if !strings.Contains(msg, helmMessage) || !strings.HasPrefix(msg, "installing release shop: ") {
		t.Errorf("install of a broken chart: %q; want helm's %q", msg, helmMessage)
	}
	if rels := e.releases(ns); len(rels) != 0 {
		t.Fatalf("a broken install left %s", describe(rels))
	}
	if msg, _ := fail(t, job(protocol.HelmPlan, broken, "v1")); !strings.Contains(msg, helmMessage) {
		t.Errorf("plan of a broken chart: %q", msg)
	}

	// A good revision, then a broken upgrade: still the good revision.
	succeed[protocol.HelmReleaseOutputs](t, job(protocol.HelmDeploy, shop, "v1"))
	msg, _ = fail(t, job(protocol.HelmDeploy, broken, "v2"))
	if !strings.Contains(msg, helmMessage) || !strings.HasPrefix(msg, "upgrading release shop: ") {
		t.Errorf("upgrade to a broken chart: %q", msg)
	}
	e.onlyRelease(ns, name, 1, release.StatusDeployed)
	if got := e.configMap(ns, "shop-settings"); got["greeting"] != "v1" {
		t.Errorf("ConfigMap after the failed upgrade: %v", got)
	}
}

func TestObjectsTheAPIServerRefusesAreRolledBack(t *testing.T) {
	e := newEnv(t)
	const ns, name = "shop-refused", "shop"
	job := func(greeting string, extra ...string) protocol.HelmManifest {
		m := e.manifest(protocol.HelmDeploy, ns, name)
		m.CreateNamespace = true
		m.ChartArchive = chartArchive(t, "shop", shop)
		m.Values = valuesJSON(t, map[string]any{"greeting": greeting, "extraConfigMaps": extra})
		return m
	}
	const apiMessage = `ConfigMap "Not_Valid" is invalid`

	// An install the API server refuses half of: nothing stays.
	msg, _ := fail(t, job("v1", "ok-extra", "Not_Valid"))
	if !strings.Contains(msg, apiMessage) || !strings.HasSuffix(msg, "(the failed release was uninstalled)") {
		t.Errorf("refused install: %q", msg)
	}
	e.checkNothingLeft(ns, "the refused install", "shop-settings", "ok-extra")

	// An upgrade the API server refuses: back to revision 1's objects,
	// deployed (a rollback is a revision of its own).
	succeed[protocol.HelmReleaseOutputs](t, job("v1"))
	msg, _ = fail(t, job("v2", "Not_Valid"))
	if !strings.Contains(msg, apiMessage) || !strings.HasSuffix(msg, "(rolled back to revision 1)") {
		t.Errorf("refused upgrade: %q", msg)
	}
	rel := e.onlyRelease(ns, name, 3, release.StatusDeployed)
	if rel.Info.Description != "Rollback to 1" || rel.Config["greeting"] != "v1" {
		t.Errorf("release after the refused upgrade: %q, values %v", rel.Info.Description, rel.Config)
	}
	if got := e.configMap(ns, "shop-settings"); got["greeting"] != "v1" {
		t.Errorf("ConfigMap after the rollback: %v", got)
	}

	// And the next deploy goes on from there.
	out, _ := succeed[protocol.HelmReleaseOutputs](t, job("v3"))
	if out.Revision != 4 || e.configMap(ns, "shop-settings")["greeting"] != "v3" {
		t.Errorf("deploy after the rollback: %+v", out)
	}
}

// sameObjects compares object lists in any order.
func sameObjects(got, want []protocol.HelmObject) bool {
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			return false
		}
	}
	return true
}

// TestDeployRecoversFromAnInterruptedAttempt: a job attempt that died in the
// middle of an operation leaves its revision pending; the retry's deploy
// goes on from there (the runner never runs two attempts at once).
func TestDeployRecoversFromAnInterruptedAttempt(t *testing.T) {
	e := newEnv(t)
	job := func(op, ns, greeting string) protocol.HelmManifest {
		m := e.manifest(op, ns, "shop")
		m.CreateNamespace = true
		m.ChartArchive = chartArchive(t, "shop", shop)
		m.Values = valuesJSON(t, map[string]any{"greeting": greeting})
		return m
	}

	// An upgrade interrupted after revision 1.
	const ns = "shop-interrupted"
	succeed[protocol.HelmReleaseOutputs](t, job(protocol.HelmDeploy, ns, "v1"))
	cfg := e.helmConfig(ns)
	rev1, err := cfg.Releases.Get("shop", 1)
	if err != nil {
		t.Fatal(err)
	}
	pending := *rev1
	pending.Info = &release.Info{Status: release.StatusPendingUpgrade, Description: "Preparing upgrade"}
	pending.Version = 2
	if err := cfg.Releases.Create(&pending); err != nil {
		t.Fatal(err)
	}
	if msg, _ := fail(t, job(protocol.HelmPlan, ns, "v2")); !strings.Contains(msg, "another operation (install/upgrade/rollback) is in progress") {
		t.Errorf("plan of a pending release: %q", msg)
	}
	out, logs := succeed[protocol.HelmReleaseOutputs](t, job(protocol.HelmDeploy, ns, "v2"))
	if out.Revision != 3 || !strings.Contains(logs, "revision 2 of release shop was left pending-upgrade by an interrupted attempt: marked failed") {
		t.Errorf("deploy after an interrupted upgrade: %+v\n%s", out, logs)
	}
	if rev2, err := cfg.Releases.Get("shop", 2); err != nil || rev2.Info.Status != release.StatusFailed {
		t.Errorf("revision 2: %v %v; want it marked failed", rev2.Info.Status, err)
	}
	e.onlyRelease(ns, "shop", 3, release.StatusDeployed)
	if got := e.configMap(ns, "shop-settings"); got["greeting"] != "v2" {
		t.Errorf("ConfigMap: %v", got)
	}

	// An install interrupted before anything was deployed: the retry starts
	// afresh.
	const ns2 = "shop-interrupted-install"
	e.createNamespace(ns2)
	first := *rev1
	first.Namespace, first.Manifest = ns2, ""
	first.Info = &release.Info{Status: release.StatusPendingInstall, Description: "Initial install underway"}
	if err := e.helmConfig(ns2).Releases.Create(&first); err != nil {
		t.Fatal(err)
	}
	out, logs = succeed[protocol.HelmReleaseOutputs](t, job(protocol.HelmDeploy, ns2, "fresh"))
	if out.Revision != 1 || !strings.Contains(logs, "has no deployed revision: removing its 1 failed revision(s) first") {
		t.Errorf("deploy after an interrupted install: %+v\n%s", out, logs)
	}
	e.onlyRelease(ns2, "shop", 1, release.StatusDeployed)
}
