package e2e

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// runnerHealth is the API's account of a runner's connection.
type runnerHealth struct {
	Status           string
	StatusSince      *time.Time                 `json:"status_since"`
	ConnectionErrors []protocol.ConnectionError `json:"connection_errors"`
}

// waitReasons waits until the API shows the runner online having reported
// an error of each kind whose message holds the text given with it.
func (s *stack) waitReasons(what string, want map[string]string) runnerHealth {
	s.t.Helper()
	var r runnerHealth
	waitFor(s.t, 2*time.Minute, what, func() bool {
		s.do("GET", "/v1/runners/"+s.runnerID, nil, &r)
		found := 0
		for kind, text := range want {
			for _, e := range r.ConnectionErrors {
				if e.Kind == kind && strings.Contains(e.Message, text) {
					found++
					break
				}
			}
		}
		return r.Status == "online" && found == len(want)
	})
	return r
}

// A runner behind a corporate proxy that trusts the gateway's certificate
// through a CA bundle: it says why it could not get through (a URL that
// leads to something else, a certificate it does not trust, a proxy that
// refuses) once it gets through again, and nothing after each fix; the
// terraform in its jobs reaches the state backend through the same proxy
// and CA (the gateway's name resolves nowhere but at the proxy).
func TestRunnerBehindProxyWithPrivateCA(t *testing.T) {
	const host = "gateway.outpost.test"
	s := newStack(t, stackOptions{gatewayURL: "https://" + host})
	ca, other := newTestCA(t, "Outpost test CA"), newTestCA(t, "another CA")
	notGateway := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "404 page not found", http.StatusNotFound) })
	front := newTLSFront(t, ca.issue(t, host), notGateway)
	proxy := newConnectProxy(t, map[string]string{host: front.addr})
	p := s.launchRunnerAt("https://"+host, "OUTPOST_TOKEN="+s.runTok, "HTTPS_PROXY=http://"+proxy.addr,
		"OUTPOST_CA_BUNDLE="+ca.file(t))

	waitFor(t, time.Minute, "a 404 from a server that is not the gateway", func() bool { return strings.Contains(p.out.String(), "404 page not found") })
	front.set(other.issue(t, host), reverseTo(s.gateway))
	proxy.cut()
	waitFor(t, time.Minute, "a certificate the runner does not trust", func() bool {
		return strings.Contains(p.out.String(), "certificate signed by unknown authority")
	})
	front.set(ca.issue(t, host), reverseTo(s.gateway))
	proxy.cut()
	r := s.waitReasons("the runner online, reporting the 404 and the certificate",
		map[string]string{"http": "404 page not found", "tls": "unknown authority"})
	if r.StatusSince == nil {
		t.Fatal("online, with no status_since")
	}
	for _, e := range r.ConnectionErrors {
		if e.At.After(*r.StatusSince) {
			t.Errorf("error at %s after the runner came online at %s: %+v", e.At, r.StatusSince, e)
		}
	}

	// Terraform in a job: its state backend is https://gateway.outpost.test.
	gate := s.syncGatedApp()
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before := proxy.tunnels(host)
	if op := s.waitOp(s.install.ID, s.startOp(s.install.ID, "/provision", nil).ID, 5*time.Minute); op.Status != status.OpSucceeded {
		t.Fatalf("provision behind the proxy: %s %q %+v", op.Status, op.Error, op.Steps)
	}
	if proxy.tunnels(host) <= before {
		t.Error("the provision made no tunnel through the proxy")
	}

	proxy.block()
	waitFor(t, time.Minute, "the proxy's refusal", func() bool { return strings.Contains(p.out.String(), "to CONNECT "+host+":443") })
	fixed := time.Now()
	proxy.blocked.Store(false)
	s.waitReasons("the runner back, reporting the proxy's refusal", map[string]string{"proxy": "403 Forbidden"})
	if c := s.waitCommand(s.runCommand("true").ID, time.Minute); c.Status != status.JobSucceeded {
		t.Fatalf("a command after the proxy came back: %s", c.Status)
	}
	s.do("GET", "/v1/runners/"+s.runnerID, nil, &r)
	for _, e := range r.ConnectionErrors {
		// A call the proxy refused just before it changed may be recorded
		// a moment after.
		if e.At.After(fixed.Add(time.Second)) {
			t.Errorf("error at %s, after the proxy was fixed at %s: %+v", e.At, fixed, e)
		}
	}
	wantLines(t, "runners show", newCLI(t, s).ok("", "runners", "show", s.runnerID), "\nonline since ",
		" tls: calling the gateway: ", ` proxy: calling the gateway: `, `the proxy `+proxy.addr+` answered "403 Forbidden" to CONNECT `+host)
}
