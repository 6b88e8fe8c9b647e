package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The operation page in chromium: a provision under prompt approval, opened
// from the install's page, shows each step waiting with its plan; approved
// from the page (confirming), it goes on, and a denied one ends it; the
// timeline shows a bar per step, web and api side by side; a job's log shows
// its lines and the search filters them; the ANSI converter turns an SGR
// escape into a coloured span; the page fits a phone.
func TestDashboardOperationPage(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig("testdata/dashboard-app")
	inst, _ := s.newInstall("shop-ops")
	if code := s.do("PUT", "/v1/installs/"+inst+"/approval-mode", map[string]string{"approval_mode": "prompt"}, nil); code != http.StatusOK {
		t.Fatalf("set approval mode: %d", code)
	}
	op := s.startOp(inst, "/provision", nil)
	b := newBrowser(t)
	signIn(b, s)
	b.click(`tr[data-install="shop-ops"] a`)
	b.click(`details[data-operation="provision"] a.op-link`)
	b.text(".operation h1", "provision", time.Minute)

	// sandbox and web approved, api denied: web goes on, the operation ends denied.
	for _, d := range []struct{ step, verb, done string }{
		{"sandbox", "approve", "Approved"}, {"web", "approve", "Approved"}, {"api", "deny", "Denied"}} {
		plan := b.text(`[data-approval="`+d.step+`"] pre.plan`, "terraform_data", 3*time.Minute)
		if !strings.Contains(plan, " to add") {
			t.Fatalf("%s's plan on the page: %q", d.step, plan)
		}
		if d.step == "web" {
			b.screenshot("dashboard-operation-approval")
		}
		b.click("#" + d.verb + "-" + d.step)
		b.text("#confirm-text", d.step+"'s plan?", time.Minute)
		b.click("#confirm-ok")
		b.text("#action-message", d.done+" "+d.step, time.Minute)
	}
	b.text(".operation h1", "denied", 3*time.Minute)
	if got := s.getOp(inst, op.ID, 0); got.Status != "denied" {
		t.Fatalf("the provision: %s %q", got.Status, got.Error)
	}

	// The timeline: a bar per step; web's and api's overlap in time (both
	// waited for approval at once).
	for step, want := range map[string]string{"sandbox": "succeeded", "web": "succeeded", "api": "denied"} {
		b.text(`[data-timeline-step="`+step+`"]`, want, time.Minute)
	}
	if !eval[bool](b, `(() => {
		const r = (s) => document.querySelector('[data-timeline-step="' + s + '"] .bar').getBoundingClientRect();
		const w = r("web"), a = r("api"), sb = r("sandbox");
		return w.width > 0 && a.width > 0 && w.left < a.right && a.left < w.right && sb.right <= Math.min(w.left, a.left) + 2;
	})()`) {
		t.Fatal("the timeline does not show web and api side by side after the sandbox")
	}

	// web's apply job's log, then a search that keeps only some lines.
	b.click(`tr[data-step="web"] li:last-child button[data-log-job]`)
	log := b.text(".logbox", "Apply complete", time.Minute)
	b.text(".log-state", "ended", time.Minute)
	b.run(time.Minute, chromedp.SendKeys(chromedp.CSS("#log-search"), "apply complete"))
	count := b.text(".log-count", "lines match", time.Minute)
	if strings.HasPrefix(count, "0 of") || !eval[bool](b, `(() => {
		const shown = [...document.querySelectorAll(".logbox .line")].filter((l) => !l.hidden);
		const all = document.querySelectorAll(".logbox .line").length;
		return shown.length > 0 && shown.length < all && shown.every((l) => l.querySelector("mark") && /apply complete/i.test(l.innerText));
	})()`) {
		t.Fatalf("the search kept the wrong lines (%s) of %q", count, log)
	}
	b.screenshot("dashboard-operation")
	if html := b.html(); strings.Contains(html, "dash-5ecret-output") || strings.Contains(html, s.token) {
		t.Fatal("the operation's page holds the sensitive output or the token")
	}

	// On a phone the page fits its width: nothing scrolls sideways but the boxes.
	b.run(time.Minute, chromedp.EmulateViewport(390, 844))
	if w := eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
		b.screenshot("dashboard-operation-phone")
		t.Fatalf("on a 390px phone the operation page is %dpx wide", w)
	}

	// terraform runs with -no-color, so the converter is tried on a line
	// with escapes: a bold green span, and markup kept as text.
	spans := eval[string](b, `import("/ui/js/ansi.js").then(({ Ansi }) =>
		JSON.stringify(new Ansi().segments("\x1b[1;32mApply complete!\x1b[0m <b>done</b>\x1b[K")))`)
	if want := `[{"text":"Apply complete!","cls":"ansi-bold ansi-fg-2"},{"text":" <b>done</b>","cls":""}]`; spans != want {
		t.Fatalf("ANSI segments: %s, want %s", spans, want)
	}
}
