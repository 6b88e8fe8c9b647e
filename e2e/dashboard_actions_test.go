package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/outpost-dev/outpost/api/wire"
)

// The install's Actions panel in chromium, with a real runner: the action
// check listed with its description and trigger; its Run form has the
// sensitive api_key as a password field; run without the required target it
// is refused with the API's message naming inputs.target; run with one it
// succeeds on the runner, its steps show their outputs (the sensitive token
// masked), and the prepare step's log, followed on the page, shows its line;
// the key is nowhere in the page.
func TestDashboardRunsAnAction(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.startRunner()
	s.syncConfig("testdata/action-app")
	const key = "key-5e7a21"
	b := newBrowser(t)
	signIn(b, s)
	b.click(`tr[data-install="customer-1"] a`)
	card := `[data-action="check"]`
	if got := b.text(card, "Prepare a target", time.Minute); !strings.Contains(got, "Triggers: manual") {
		t.Fatalf("the action check on the page: %q", got)
	}
	b.click("#run-check")
	b.text(`form[data-form="check"]`, "api_key string, sensitive", time.Minute)
	if typ := eval[string](b, `document.getElementById("input-api_key").type`); typ != "password" {
		t.Fatalf("the sensitive input api_key is a %q field", typ)
	}

	b.click("#run-submit-check")
	b.text(card+" .action-message", `input "target" is required`, time.Minute)
	b.text(card+" .action-message", "inputs.target", time.Minute)
	if !eval[bool](b, `document.getElementById("input-target").getAttribute("aria-invalid") === "true"`) {
		t.Error("the refused field target is not marked invalid")
	}

	b.run(time.Minute, chromedp.SendKeys(chromedp.CSS("#input-target"), "blue"), chromedp.SendKeys(chromedp.CSS("#input-api_key"), key))
	b.click("#run-submit-check")
	b.text(card+" .action-message", "started", time.Minute)
	b.text(card+" details[data-run] summary", "succeeded", 2*time.Minute)
	prep := b.text(card+` tr[data-run-step="prepare"]`, "blue-1", time.Minute)
	if !strings.Contains(prep, "version") || !strings.Contains(prep, "token") || !strings.Contains(prep, "sensitive") {
		t.Fatalf("the prepare step's row: %q, want version blue-1 and the token masked", prep)
	}
	b.text(card+` tr[data-run-step="use"]`, "seen", time.Minute)
	b.click(card + ` tr[data-run-step="prepare"] button[data-log-job]`)
	b.text("#actions .log .logbox", "preparing blue", time.Minute)
	b.text("#actions .log .log-state", "ended", time.Minute)
	b.screenshot("dashboard-actions")
	if html := b.html(); strings.Contains(html, key) {
		t.Fatal("the page holds the sensitive key")
	}
	b.run(time.Minute, chromedp.EmulateViewport(390, 844))
	if w := eval[int](b, "document.documentElement.scrollWidth"); w > 390 {
		t.Fatalf("on a 390px phone the install page with its actions is %dpx wide", w)
	}

	var list wire.ActionRunList
	if code := s.do("GET", "/v1/installs/"+s.install.ID+"/actions/check/runs", nil, &list); code != http.StatusOK || len(list.Runs) != 1 {
		t.Fatalf("runs: %d %+v, want the one run from the page", code, list.Runs)
	}
	if r := list.Runs[0]; r.Status != "succeeded" || r.Inputs["target"] != "blue" || r.Inputs["api_key"] != "(sensitive)" || r.StartedBy == "" {
		t.Fatalf("the run from the page: %+v", r)
	}
}
