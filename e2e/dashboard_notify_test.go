package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// The Notifications page in chromium: a webhook subscription made from its
// form is listed, and its signing secret is shown once (the receiver checks
// the deliveries' signatures with the secret read from the page; it is gone
// when the page is opened again). A failed provision's delivery shows with
// its try (200); Redeliver sends the event again; Delete removes it.
func TestDashboardNotifications(t *testing.T) {
	s := newStack(t, stackOptions{runnerTimeout: 3 * time.Second})
	s.syncConfig("testdata/failing-app")
	recv := newWebhookReceiver(t)
	b := newBrowser(t)
	signIn(b, s)
	b.click(`#nav a[href="#/notifications"]`)
	b.text("#subscriptions-none", "No subscriptions", time.Minute)

	b.run(time.Minute, chromedp.SendKeys(chromedp.CSS("#sub-name"), "ops-hook"), chromedp.SendKeys(chromedp.CSS("#sub-url"), recv.URL))
	b.click(`#sub-events label[data-event="operation.failed"]`)
	b.click(`#sub-apps label[data-app="` + s.install.AppID + `"]`)
	b.click("#sub-create")
	secret := strings.TrimSpace(b.text("#sub-secret", "", time.Minute))
	recv.setSecret(secret)
	sub := b.text(`[data-subscription="ops-hook"]`, "operation.failed", time.Minute)
	if !strings.Contains(sub, recv.URL) || !strings.Contains(sub, "webhook") || !strings.Contains(sub, "demo") {
		t.Fatalf("the subscription on the page: %q", sub)
	}

	// No runner is started: the provision fails after the runner timeout.
	if op := s.waitOp(s.install.ID, s.startOp(s.install.ID, "/provision", nil).ID, time.Minute); op.Status != status.OpFailed {
		t.Fatalf("the provision without a runner: %s", op.Status)
	}
	waitFor(t, time.Minute, "the signed operation.failed webhook", func() bool {
		evs, bad := recv.events()
		if len(bad) > 0 {
			t.Fatalf("bad signatures (the page's secret is not the subscription's): %q", bad)
		}
		return len(evs) == 1 && evs[0].Type == contract.EventOperationFailed
	})

	b.click(`[data-subscription="ops-hook"] details summary`)
	if got := b.text(`[data-subscription="ops-hook"] tr[data-delivery]`, "delivered", time.Minute); !strings.Contains(got, "operation.failed") || !strings.Contains(got, "200") {
		t.Fatalf("the delivery on the page: %q", got)
	}
	b.click(`[data-subscription="ops-hook"] button[data-redeliver]`)
	b.click("#confirm-ok")
	b.text("#notify-message", "Redelivery started.", time.Minute)
	waitFor(t, time.Minute, "the redelivery", func() bool { evs, _ := recv.events(); return len(evs) == 2 })
	waitFor(t, time.Minute, "two deliveries on the page", func() bool {
		return eval[int](b, `document.querySelectorAll('[data-subscription="ops-hook"] tr[data-delivery]').length`) == 2
	})

	b.click(`#nav a[href="#/installs"]`)
	b.text(`tr[data-install="customer-1"]`, "failed", time.Minute)
	b.click(`#nav a[href="#/notifications"]`)
	b.text(`[data-subscription="ops-hook"]`, "operation.failed", time.Minute)
	if html := b.html(); strings.Contains(html, secret) {
		t.Fatal("the secret is shown again")
	}
	b.click(`[data-subscription="ops-hook"] details summary`)
	b.text(`[data-subscription="ops-hook"] tr[data-delivery]`, "delivered", time.Minute)
	b.screenshot("dashboard-notifications")
	b.run(time.Minute, chromedp.EmulateViewport(390, 844))
	if w := eval[int](b, "document.documentElement.scrollWidth"); w > 390 {
		t.Fatalf("on a 390px phone the Notifications page is %dpx wide", w)
	}

	b.click(`[data-subscription="ops-hook"] button[data-delete]`)
	b.click("#confirm-ok")
	b.text("#subscriptions-none", "No subscriptions", time.Minute)
	var list struct {
		Subscriptions []any `json:"subscriptions"`
	}
	if code := s.do("GET", "/v1/notifications/subscriptions", nil, &list); code != http.StatusOK || len(list.Subscriptions) != 0 {
		t.Fatalf("subscriptions after Delete: %d %+v", code, list)
	}
}
