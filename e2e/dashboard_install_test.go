package e2e

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/outpost-dev/outpost/contract/status"
)

// The demo install's page, provisioned from its button, draws its
// components as the dependency graph (network before database and cache,
// api after both, web after api and cluster) whose nodes change colour as
// the steps finish, and shows its maintenance window. After the web chart's
// ConfigMap is edited in the cluster and a drift check runs, web is marked
// drifted on the graph, in the table (with the plan) and on the installs
// list; its Deploy button, confirmed, clears the drift without a reload.
func TestDashboardInstallGraphDriftAndActions(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig(exampleDir)
	inst, _ := s.newInstall("cust-dash", map[string]any{"name": "db_password", "value": "dash-pa55", "sensitive": true})
	later := time.Now().UTC().Add(3 * time.Hour).Truncate(time.Minute)
	if code, body := s.put("/v1/installs/"+inst+"/maintenance-windows", map[string]any{"windows": everyDay(later, "1h")}); code != http.StatusOK {
		t.Fatalf("PUT windows: %d %v", code, body)
	}
	b := newBrowser(t)
	signIn(b, s)
	b.click(`tr[data-install="cust-dash"] a`)
	b.text("#windows", later.Format("15:04")+" for 1h (UTC)", time.Minute)
	b.click("#provision")
	b.click("#confirm-ok")
	if seen := watchGraph(b, 5*time.Minute); !slices.ContainsFunc(slices.Collect(maps.Values(seen)), func(tones []string) bool { return len(tones) > 1 }) {
		t.Fatalf("the graph's nodes never changed colour during the provision: %v", seen)
	}
	columns := graphColumns(b)
	if !(columns["sandbox"] < columns["network"] && columns["network"] < columns["database"] && columns["database"] == columns["cache"] &&
		columns["cache"] < columns["api"] && columns["api"] < columns["web"] && columns["cluster"] < columns["web"]) {
		t.Fatalf("the graph's columns %v: want sandbox, network, database and cache, api, web in order", columns)
	}
	// The runner reads web's Deployment in the install's cluster (no node
	// runs its pod here: its rollout never ends).
	b.text(`tr[data-health="web"]`, "degraded", 2*time.Minute)
	b.text(`tr[data-health="web"]`, "Deployment/demo/web", time.Second)
	b.text("#install-health", "degraded", time.Minute)

	ctx := context.Background()
	cms := s.kube(inst).CoreV1().ConfigMaps("demo")
	cm, err := cms.Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["API_URL"] = "https://edited.example.com"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if check := s.waitOp(inst, s.startOp(inst, "/drift-check", nil).ID, 3*time.Minute); check.step(t, "web").Status != status.StepDrifted {
		t.Fatalf("drift check: %s %q %+v", check.Status, check.Error, check.Steps)
	}
	b.text(`tr[data-component="web"]`, "drifted", time.Minute)
	if !eval[bool](b, `document.querySelector('#graph [data-node="web"]').classList.contains("drifted")`) {
		t.Error("the graph's web node is not marked drifted")
	}
	b.click(`[data-drift="web"] summary`)
	b.text(`[data-drift="web"] pre`, "API_URL: https://edited.example.com", time.Minute)
	b.screenshot("dashboard-graph")
	b.click(`a.brand`)
	b.text(`tr[data-install="cust-dash"]`, "drifted: web", time.Minute)
	b.text(`tr[data-install="cust-dash"] td[data-label="Health"]`, "degraded", time.Minute)

	b.click(`tr[data-install="cust-dash"] a`)
	eval[bool](b, `window.notReloaded = true`)
	b.click(`button[data-deploy="web"]`)
	b.click("#confirm-ok")
	b.text("#action-message", "Deploy web: started.", time.Minute)
	waitFor(t, 3*time.Minute, "web no longer drifted on the page", func() bool {
		return eval[bool](b, `(() => { const r = document.querySelector('tr[data-component="web"]');
			return !!r && !r.classList.contains("drifted") && r.innerText.includes("succeeded"); })()`)
	})
	if !eval[bool](b, "window.notReloaded === true") {
		t.Fatal("the page was reloaded")
	}
	if d := s.drift(inst)["web"]; d.Drifted {
		t.Fatalf("the API still has web drifted: %+v", d)
	}
}

// watchGraph samples the graph's node colours until every node is green,
// and is the colours each node showed, in order.
func watchGraph(b *browser, within time.Duration) map[string][]string {
	b.t.Helper()
	seen := map[string][]string{}
	waitFor(b.t, within, "every node of the graph green", func() bool {
		raw := eval[string](b, `[...document.querySelectorAll("#graph [data-node]")].map((n) => n.dataset.node + "=" + n.classList[1]).join(" ")`)
		green := raw != ""
		for _, f := range strings.Fields(raw) {
			name, tone, _ := strings.Cut(f, "=")
			if l := seen[name]; len(l) == 0 || l[len(l)-1] != tone {
				seen[name] = append(l, tone)
			}
			green = green && tone == "good"
		}
		return green
	})
	return seen
}

// graphColumns is each graph node's column, from its x position.
func graphColumns(b *browser) map[string]int {
	b.t.Helper()
	raw := eval[string](b, `[...document.querySelectorAll("#graph [data-node]")].map((n) => n.dataset.node + "=" + n.transform.baseVal[0].matrix.e).join(" ")`)
	xs := map[string]float64{}
	var distinct []float64
	for _, f := range strings.Fields(raw) {
		name, x, _ := strings.Cut(f, "=")
		v, _ := strconv.ParseFloat(x, 64)
		xs[name] = v
		if !slices.Contains(distinct, v) {
			distinct = append(distinct, v)
		}
	}
	sort.Float64s(distinct)
	cols := map[string]int{}
	for name, x := range xs {
		cols[name] = sort.SearchFloat64s(distinct, x)
	}
	return cols
}
