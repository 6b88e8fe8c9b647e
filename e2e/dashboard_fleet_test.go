package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The dashboard's apps, runners and releases pages in chromium: an app with
// two config versions lists both, diffs them (the component's moved source)
// and shows its builds' digests; the runners page shows an install's runner
// online with its helm install line (a placeholder for the token); a release
// with a pause between its batches is paused and resumed from the page,
// then rolled back and the rollback cancelled, each confirmed, and the API
// answers the new state.
func TestDashboardAppsRunnersReleases(t *testing.T) {
	s, insts := newFleet(t)
	b := newBrowser(t)
	signIn(b, s)
	b.show("#/apps")
	b.text(`tr[data-app="demo"]`, "v2", time.Minute)
	b.click(`tr[data-app="demo"] a`)
	b.text(`tr[data-version="1"]`, "v1", time.Minute)
	b.text(`tr[data-version="2"]`, "latest", time.Minute)
	b.text("#config-diff .diff-line.del", `"source": "modules/web"`, time.Minute)
	b.text("#config-diff .diff-line.add", `"source": "modules/site"`, time.Minute)
	v2 := b.text(`table.builds tbody tr:first-child`, "sha256:", 3*time.Minute)
	if v1 := b.text(`table.builds tbody tr:last-child`, "sha256:", time.Minute); v1 == v2 || !strings.Contains(v1, "v1") || !strings.Contains(v2, "v2") {
		t.Fatalf("the builds: %q (v2), %q (v1)", v2, v1)
	}
	b.screenshot("dashboard-apps")

	b.show("#/runners")
	runner := b.text(`[data-for-install="fleet-1"]`, "online", time.Minute)
	if !strings.Contains(runner, "install runner") || !strings.Contains(runner, "fleet-1") || !strings.Contains(runner, "0 running, 0 queued") {
		t.Fatalf("fleet-1's runner card: %q", runner)
	}
	b.click(`[data-for-install="fleet-1"] summary`)
	if line := b.text(`[data-for-install="fleet-1"] .helm-install`, "helm", time.Minute); !strings.Contains(line, "<TOKEN>") {
		t.Fatalf("the helm install line: %q", line)
	}
	if strings.Contains(b.html(), s.runTok) {
		t.Fatal("the runners page holds a registration token")
	}

	r := s.startRelease(map[string]any{"config_version": 2, "installs": map[string]any{"names": []string{"fleet-1", "fleet-2"}},
		"batch_size": 1, "pause_between_batches": "15s"})
	b.show(fmt.Sprintf("#/apps/%s/releases", s.install.AppID))
	card := fmt.Sprintf("article[data-release=%q]", r.ID)
	b.text(card+" h2", "running", time.Minute)
	b.confirmAction(card + ` button[data-action="pause"]`)
	waitFor(t, time.Minute, "the release to be asked to pause", func() bool { return s.getRelease(r.ID).Paused })
	s.waitRelease(r.ID, "paused")
	b.text(card+" h2", "paused", time.Minute)
	b.text(card+` table[data-batch="0"] tr[data-install="fleet-1"]`, "succeeded", time.Minute)
	b.text(card+` table[data-batch="1"] tr[data-install="fleet-2"]`, "pending", time.Minute)
	b.screenshot("dashboard-releases")

	b.confirmAction(card + ` button[data-action="resume"]`)
	waitFor(t, time.Minute, "the release to be resumed", func() bool { return !s.getRelease(r.ID).Paused })
	s.waitRelease(r.ID, "succeeded")
	b.text(card+` table[data-batch="1"] tr[data-install="fleet-2"]`, "succeeded", time.Minute)
	if v := s.installVersions(insts["fleet-2"]).ConfigVersion; v != 2 {
		t.Fatalf("fleet-2 runs config version %d after the release, want 2", v)
	}

	// Roll it back from the page, then cancel the rollback before its
	// second batch.
	b.confirmAction(card + ` button[data-action="rollback"]`)
	var back release
	waitFor(t, time.Minute, "the rollback to start", func() bool { back = s.latestRelease(); return back.RollbackOf == r.ID })
	backCard := fmt.Sprintf("article[data-release=%q]", back.ID)
	b.text(backCard+" h2", "running", time.Minute)
	b.confirmAction(backCard + ` button[data-action="cancel"]`)
	s.waitRelease(back.ID, "cancelled")
	b.text(backCard+` table[data-batch="1"] tr[data-install="fleet-2"]`, "skipped", time.Minute)

	// On a phone no page is wider than the screen.
	b.run(time.Minute, chromedp.EmulateViewport(390, 844))
	for page, shown := range map[string]string{"#/apps/" + s.install.AppID: "#config-diff", "#/runners": `[data-for-install="fleet-1"]`,
		"#/apps/" + s.install.AppID + "/releases": card} {
		b.show(page)
		b.text(shown, "", time.Minute)
		if w := eval[int](b, "document.documentElement.scrollWidth"); w > 390 {
			t.Fatalf("%s is %dpx wide on a 390px screen", page, w)
		}
	}
}

// newFleet is a stack whose app has two config versions (version 2 moves
// web's module and adds an output to it: a new build) and two installs, fleet-1 and fleet-2, provisioned with
// version 1.
func newFleet(t *testing.T) (*stack, map[string]string) {
	s, dir := newStack(t, stackOptions{}), t.TempDir()
	copyDir(t, "testdata/dashboard-app", dir)
	s.syncConfig(dir)
	insts := s.provisionFleet("fleet-1", "fleet-2")
	copyDir(t, filepath.Join(dir, "modules", "web"), filepath.Join(dir, "modules", "site"))
	copyFile(t, "testdata/dashboard-v2/web.toml", filepath.Join(dir, "components", "web.toml"))
	copyFile(t, "testdata/dashboard-v2/version.tf", filepath.Join(dir, "modules", "site", "version.tf"))
	s.syncConfig(dir)
	return s, insts
}

// provisionFleet creates the installs, each with its runner, and provisions
// them.
func (s *stack) provisionFleet(names ...string) map[string]string {
	s.t.Helper()
	insts := map[string]string{}
	for _, name := range names {
		insts[name], _ = s.newInstall(name)
	}
	s.provisionAll(insts)
	return insts
}

// latestRelease is the app's newest release.
func (s *stack) latestRelease() release {
	s.t.Helper()
	var list struct{ Releases []release }
	if code := s.do("GET", "/v1/apps/"+s.install.AppID+"/releases", nil, &list); code != http.StatusOK || len(list.Releases) == 0 {
		s.t.Fatalf("GET releases: %d %+v", code, list)
	}
	return list.Releases[0]
}

// show goes to a dashboard page by its fragment.
func (b *browser) show(fragment string) {
	b.t.Helper()
	eval[string](b, fmt.Sprintf("location.hash = %q", fragment))
}

// confirmAction clicks a button and confirms it in the page's dialog.
func (b *browser) confirmAction(sel string) {
	b.t.Helper()
	b.click(sel)
	b.click("#confirm-ok")
}
