package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// BenchmarkDashboardFirstList loads the dashboard, signed in, in chromium
// and measures in the page the time from the navigation's start to the
// installs list rendered with all its rows (performance.now() once the last
// row is there), and the page's weight: the bytes of the HTML, scripts,
// stylesheet and API answers it read by then (their bodies, as sent), and
// of those, what went over the wire (the rest came from the browser's cache
// or was a 304): cold, the browser's cache emptied first; warm, as a
// returning viewer loads it.
func BenchmarkDashboardFirstList(b *testing.B) {
	const installs = 20
	s := newStack(b, stackOptions{})
	s.syncConfig("testdata/dashboard-app")
	for i := range installs {
		var created struct{ ID string }
		if code := s.do("POST", "/v1/installs", map[string]any{"app_id": s.install.AppID, "name": fmt.Sprintf("bench-%02d", i)}, &created); code != http.StatusCreated {
			b.Fatalf("create install: %d", code)
		}
	}
	br := newBrowser(b)
	signIn(br, s)
	for _, cold := range []bool{true, false} {
		b.Run(map[bool]string{true: "cold", false: "warm"}[cold], func(b *testing.B) {
			var ms, body, wire float64
			for range b.N {
				br.run(time.Minute, chromedp.Navigate("about:blank"))
				if cold {
					br.run(time.Minute, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
						_, err := cdp.Call(ctx, t, network.ClearBrowserCache, cdp.Empty{})
						return err
					}))
				}
				br.run(time.Minute, chromedp.Navigate(s.apiURL+"/ui/#/installs"))
				m := firstList(br, installs+1) // and the stack's own install
				ms, body, wire = ms+m["ms"], body+m["body"], wire+m["wire"]
			}
			n := float64(b.N)
			b.ReportMetric(ms/n, "ms-to-list")
			b.ReportMetric(body/n/1024, "page-KiB")
			b.ReportMetric(wire/n/1024, "wire-KiB")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// firstList waits in the page until the installs list has rows rows, and
// is then the time since the navigation began (ms) and the bytes of what
// the page had read: bodies as sent (body) and over the wire (wire).
func firstList(br *browser, rows int) map[string]float64 {
	br.t.Helper()
	return eval[map[string]float64](br, fmt.Sprintf(`new Promise((resolve) => {
		const done = () => {
			if (document.querySelectorAll("tr[data-install]").length < %d) return requestAnimationFrame(done);
			const t = performance.now();
			const entries = [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")];
			resolve({ ms: t, body: entries.reduce((n, e) => n + e.encodedBodySize, 0), wire: entries.reduce((n, e) => n + e.transferSize, 0) });
		};
		done();
	})`, rows))
}
