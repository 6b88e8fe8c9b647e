package e2e

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// The runner says why it was offline. Started against a gateway address
// that refuses connections, then reaching the gateway through a proxy on
// that address whose answers carry a Date ten minutes ahead, it reports
// once through the refused connections (network) and the clock skew
// (clock), and the API shows them on the runner.
func TestRunnerReportsWhyItWasOffline(t *testing.T) {
	s := newStack(t, stackOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	p := s.launchRunnerAt("http://"+addr, "OUTPOST_TOKEN="+s.runTok)
	waitFor(t, time.Minute, "the runner's first refused call", func() bool { return strings.Contains(p.out.String(), "connection refused") })

	target, _ := url.Parse(s.gateway)
	proxy := httputil.NewSingleHostReverseProxy(target)
	ahead := time.Now().Add(10 * time.Minute).UTC().Format(http.TimeFormat)
	proxy.ModifyResponse = func(r *http.Response) error { r.Header.Set("Date", ahead); return nil }
	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: proxy}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	var r struct {
		Status           string
		ConnectionErrors []protocol.ConnectionError `json:"connection_errors"`
	}
	waitFor(t, time.Minute, "the runner online, reporting the refused calls and the clock", func() bool {
		s.do("GET", "/v1/runners/"+s.runnerID, nil, &r)
		var refused, clock bool
		for _, e := range r.ConnectionErrors {
			refused = refused || e.Kind == "network" && strings.Contains(e.Message, "connection refused")
			clock = clock || e.Kind == "clock" && strings.Contains(e.Message, "off the gateway's")
		}
		return r.Status == "online" && refused && clock
	})
	if len(r.ConnectionErrors) > 5 {
		t.Errorf("%d connection errors kept, want the latest 5 at most", len(r.ConnectionErrors))
	}
}
