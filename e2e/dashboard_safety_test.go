package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The dashboard shows no secret and nothing of another org. After the
// installs list and the install's page with every operation opened, neither
// the pages' HTML nor any API answer the page read (listed from the
// browser's resource timing, read again with its session) holds the
// install's sensitive input, its sensitive outputs (the install registry's
// password, the cluster's kubeconfig) or the token. Signed in as another
// org, the first org's install by URL is a not-found page naming nothing of
// it, and that org's list is empty.
func TestDashboardShowsNoSecretAndNoOtherOrg(t *testing.T) {
	s, inst := provisionedDemo(t, exampleDir, "cust-secret")
	var registryPassword, kubeconfig string
	json.Unmarshal(s.sandboxOutputs(inst).Outputs["registry_password"].Value, &registryPassword)
	json.Unmarshal(s.stepOutputs(inst, "cluster").Outputs["kubeconfig"].Value, &kubeconfig)
	_, key, _ := strings.Cut(kubeconfig, "client-key-data: ")
	secrets := map[string]string{"the sensitive input": "cust-secret-pa55", "the registry password": registryPassword,
		"the kubeconfig's key": strings.TrimSpace(strings.SplitN(key, "\n", 2)[0]), "the token": s.token}
	for what, v := range secrets {
		if len(v) < 8 {
			t.Fatalf("%s %q: too short to search for", what, v)
		}
	}

	b := newBrowser(t)
	signIn(b, s)
	eval[bool](b, `performance.setResourceTimingBufferSize(100000), true`)
	b.text(`tr[data-install="cust-secret"]`, "active", time.Minute)
	pages := b.html()
	b.click(`tr[data-install="cust-secret"] a`)
	b.text(`[data-outputs="database"]`, "sensitive", time.Minute)
	eval[bool](b, `document.querySelectorAll("details").forEach((d) => { d.open = true; d.dispatchEvent(new Event("toggle")); }), true`)
	b.text(`details[data-operation="provision"] tr[data-step="web"]`, "succeeded", time.Minute)
	pages += b.html()
	// Every other page: the provision's, with web's apply log open; the
	// apps, the app, its releases; the runners.
	var ops struct{ Operations []operation }
	s.do("GET", "/v1/installs/"+inst+"/operations?limit=1", nil, &ops)
	if len(ops.Operations) != 1 {
		t.Fatalf("operations of %s: %+v", inst, ops)
	}
	op := s.getOp(inst, ops.Operations[0].ID, 0)
	for fragment, shown := range map[string]string{
		"#/installs/" + inst + "/operations/" + op.ID: `[data-timeline-step="web"]`,
		"#/apps":                    `tr[data-app="demo"]`,
		"#/apps/" + s.install.AppID: `tr[data-build][data-component="web"]`,
		"#/apps/" + s.install.AppID + "/releases": "#view h1",
		"#/runners": `[data-for-install="cust-secret"]`,
	} {
		b.show(fragment)
		b.text(shown, "", time.Minute)
		if strings.Contains(fragment, "/operations/") {
			b.click(`[data-log-job="` + op.step(t, "web").ApplyJobID + `"]`)
			b.text("#view", "revision 1 deployed", time.Minute)
		}
		pages += b.html()
	}
	answers := eval[string](b, `(async () => {
		const urls = [...new Set(performance.getEntriesByType("resource").map((e) => e.name).filter((u) => u.includes("/v1/")))];
		const bodies = await Promise.all(urls.map((u) => fetch(u, { credentials: "same-origin", cache: "no-store" }).then((r) => r.text())));
		return JSON.stringify({ urls, bodies });
	})()`)
	var read struct{ URLs, Bodies []string }
	if err := json.Unmarshal([]byte(answers), &read); err != nil {
		t.Fatal(err)
	}
	if !containsAll(strings.Join(read.URLs, " "), "/v1/installs/"+inst+"/outputs", "/v1/installs/"+inst+"/operations/", "/v1/runners", "/v1/apps/"+s.install.AppID+"/builds", "/v1/jobs/") {
		t.Fatalf("the page read %v: want the outputs, an operation and the runners among them", read.URLs)
	}
	seen := pages + strings.Join(read.Bodies, "\n")
	for what, v := range secrets {
		if strings.Contains(seen, v) {
			t.Errorf("%s is in the dashboard's pages or the %d API answers it read", what, len(read.URLs))
		}
	}

	rival, err := s.store.CreateOrgWithAdmin(context.Background(), "rival")
	if err != nil {
		t.Fatal(err)
	}
	b.click("#signout")
	signInAs(b, s, rival.Org.Name, rival.Password)
	b.text("#org", rival.Org.Name, time.Minute)
	b.text("#view h1", "No installs yet", time.Minute)
	b.run(time.Minute, chromedp.Navigate(s.apiURL+"/ui/#/installs/"+inst))
	b.text("#view .error", "not found", time.Minute)
	if html := b.html(); strings.Contains(html, "cust-secret") || strings.Contains(html, s.install.AppID) {
		t.Fatal("another org's not-found page names the install or its app")
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
