package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/outpost-dev/outpost/store"
)

// browser is a headless Debian chromium driven over the DevTools protocol.
type browser struct {
	t   testing.TB
	ctx context.Context
}

// newBrowser starts chromium (as root: --no-sandbox) with a 1280px window.
func newBrowser(t testing.TB) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium on PATH: `bash scripts/tools.sh chromium` installs it")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx}
}

// run runs actions, failing the test after within.
func (b *browser) run(within time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, within)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// get is the result of one action, failing the test after 30s.
func get[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("browser: %v", err)
	}
	return v
}

// eval is the value of a JavaScript expression (a promise is awaited).
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	return get(b, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
}

// text waits until a node matching sel is shown with text holding want,
// and is its text. It reads the page with one script each time, so a node
// the page's poll re-renders meanwhile is simply read again.
func (b *browser) text(sel, want string, within time.Duration) string {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e && e.checkVisibility() ? e.innerText : ""; })()`, sel)
	var got string
	var err error // the last read that failed: a busy machine may stall one, so it is read again
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
		got, err = chromedp.Run(ctx, chromedp.Evaluate[string](js))
		cancel()
		if err == nil && got != "" && strings.Contains(got, want) {
			return got
		}
		if time.Now().After(deadline) {
			page := eval[string](b, `document.getElementById("view")?.innerText || ""`)
			b.t.Fatalf("after %s, %s shows %q, not %q (last read's error: %v); the page shows:\n%s", within, sel, got, want, err, page)
		}
	}
}

// click clicks the node matching sel, once it is shown; again if the page's
// poll re-rendered it between finding and clicking it.
func (b *browser) click(sel string) {
	b.t.Helper()
	for try := 1; ; try++ {
		b.text(sel, "", time.Minute)
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		cancel()
		if err == nil {
			return
		}
		if try == 3 || !strings.Contains(err.Error(), "Could not find node") {
			b.t.Fatalf("browser: click %s: %v", sel, err)
		}
	}
}

// signIn signs in as org's admin with password on the sign-in form the
// page shows.
func (b *browser) signIn(org, password string) {
	b.t.Helper()
	b.fillSignIn(org, store.LocalAdminName, password)
	b.click("#signin")
	b.text("#org", "", time.Minute)
}

// fillSignIn types org, user and password into the sign-in form.
func (b *browser) fillSignIn(org, user, password string) {
	b.t.Helper()
	b.run(time.Minute, chromedp.WaitVisible(chromedp.CSS("#signin-password")))
	for name, v := range map[string]string{"org": org, "user": user, "password": password} {
		eval[string](b, `document.getElementById("signin-`+name+`").value = ""`)
		b.run(time.Minute, chromedp.SendKeys(chromedp.CSS("#signin-"+name), v))
	}
}

// html is the page's whole HTML as the browser has it now.
func (b *browser) html() string {
	b.t.Helper()
	return get(b, chromedp.OuterHTML(chromedp.CSS("html")))
}

// screenshot saves the page as docs/screenshots/<name>.png when
// OUTPOST_SCREENSHOTS is set (the docs' pictures), else in the test's
// directory.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	png := get(b, chromedp.FullScreenshot(100))
	dir := b.t.TempDir()
	if os.Getenv("OUTPOST_SCREENSHOTS") != "" {
		dir = filepath.Join("..", "docs", "screenshots")
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// signIn opens the dashboard and signs in as the stack's org's admin.
func signIn(b *browser, s *stack) {
	b.t.Helper()
	signInAs(b, s, "acme", s.password)
}

// signInAs opens the dashboard and signs in as org's admin with password.
func signInAs(b *browser, s *stack, org, password string) {
	b.t.Helper()
	b.run(time.Minute, chromedp.Navigate(s.apiURL+"/ui/"))
	b.signIn(org, password)
}

// The dashboard against the real stack, in chromium: a wrong password is
// refused, the admin's signs in (a server session, its ID in a cookie the
// page cannot read),
// the installs list shows the install, its page shows components and
// outputs with no sensitive value, a provision started from the page (after
// confirming) runs and shows without a reload, a change without the CSRF
// proof is refused, and signing out ends the session.
func TestDashboardInBrowser(t *testing.T) {
	s := newStack(t, stackOptions{})
	s.syncConfig("testdata/dashboard-app")
	inst, _ := s.newInstall("shop-eu")
	b := newBrowser(t)
	ui := s.apiURL + "/ui/"

	b.run(time.Minute, chromedp.Navigate(ui))
	b.fillSignIn("acme", store.LocalAdminName, "not the password")
	b.click("#signin")
	b.text("#signin-error", "Sign-in refused", time.Minute)

	b.signIn("acme", s.password)
	row := b.text(`tr[data-install="shop-eu"]`, "none deployed", time.Minute)
	if !strings.Contains(row, "demo") || !strings.Contains(row, "created") {
		t.Fatalf("the installs list's row of shop-eu: %q", row)
	}
	b.text("#org", "", time.Minute)
	if cookies := eval[string](b, "document.cookie"); strings.Contains(cookies, s.token) || strings.Contains(cookies, "outpost_session") {
		t.Fatalf("document.cookie reads the session: %q", cookies)
	}
	b.screenshot("dashboard-installs")

	// The install's page: provision from it, confirmed in the dialog.
	b.click(`tr[data-install="shop-eu"] a`)
	b.text("#provision", "Provision", time.Minute)
	eval[bool](b, `window.notReloaded = true`)
	b.click("#provision")
	b.click("#confirm-ok")
	b.text(`tr[data-component="web"]`, "succeeded", 5*time.Minute)
	if !eval[bool](b, "window.notReloaded === true") {
		t.Fatal("the page was reloaded to show the provision")
	}
	if outputs := b.text(`[data-outputs="web"]`, "https://web.dashboard.test", time.Minute); !strings.Contains(outputs, "admin_password") ||
		!strings.Contains(outputs, "sensitive") {
		t.Fatalf("web's outputs: %q", outputs)
	}
	b.text(`details[data-operation="provision"] summary`, "succeeded", 5*time.Minute)
	if html := b.html(); strings.Contains(html, "dash-5ecret-output") || strings.Contains(html, s.token) {
		t.Fatal("the install's page holds the sensitive output or the token")
	}
	b.screenshot("dashboard-install")

	// A change with the cookie but without the CSRF header is refused.
	status := eval[int](b, fmt.Sprintf(`fetch("/v1/installs/%s/deprovision", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"}).then(r => r.status)`, inst))
	if status != 403 {
		t.Fatalf("a deprovision without the CSRF header: %d, want 403", status)
	}

	b.click("#signout")
	b.run(time.Minute, chromedp.WaitVisible(chromedp.CSS("#signin-password")))
	if status := eval[int](b, `fetch("/v1/org").then(r => r.status)`); status != 401 {
		t.Fatalf("GET /v1/org after signing out: %d, want 401", status)
	}
}
