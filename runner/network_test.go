package runner

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// Jobs get the runner's proxy variables, and its CA bundle as a certificate
// directory ahead of the system's; nothing else of its environment.
func TestJobsGetTheProxyAndTheCABundle(t *testing.T) {
	for _, k := range proxyEnv {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("HTTPS_PROXY", "http://proxy.corp.example:3128")
	t.Setenv("NO_PROXY", ".internal")
	t.Setenv("SSL_CERT_DIR", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("OUTPOST_TOKEN", "oprn_secret")
	bundle := filepath.Join(t.TempDir(), "corp.pem")
	if err := os.WriteFile(bundle, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	env, err := Config{CABundle: bundle}.networkEnv(work)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"HTTPS_PROXY=http://proxy.corp.example:3128", "NO_PROXY=.internal", "no_proxy=.internal",
		"SSL_CERT_DIR=" + filepath.Join(work, caDirName) + ":" + strings.Join(certDirs, ":")}
	if !slices.Equal(env, want) {
		t.Errorf("job environment %q, want %q", env, want)
	}
	if b, err := os.ReadFile(filepath.Join(work, caDirName, "outpost-ca-bundle.pem")); err != nil || !strings.HasPrefix(string(b), "-----BEGIN") {
		t.Errorf("the bundle in the jobs' CA directory: %q %v", b, err)
	}
}

// A proxy's refusal is of kind proxy; a 404 from something that is not the
// gateway (no protocol code) is recorded and retried, the gateway's own 404
// is neither.
func TestRefusalsAndForeign404s(t *testing.T) {
	if k := kindOf(fmt.Errorf("calling the gateway: %w", &ProxyError{Proxy: "p:3128", Target: "gw:443", Status: "403 Forbidden"})); k != "proxy" {
		t.Errorf("a proxy's refusal is of kind %q", k)
	}
	foreign := &GatewayError{Path: "/runner/v1/heartbeat", StatusCode: http.StatusNotFound, Body: protocol.Error{Message: "404 page not found"}}
	own := &GatewayError{Path: "/runner/v1/jobs/j/complete", StatusCode: http.StatusNotFound, Body: protocol.Error{Code: "not_found"}}
	if permanent(foreign) || !permanent(own) {
		t.Errorf("permanent: foreign 404 %v, the gateway's own %v; want false, true", permanent(foreign), permanent(own))
	}
	var c connErrors
	c.failed(context.Background(), own)
	c.failed(context.Background(), foreign)
	if l := c.take(); len(l) != 1 || l[0].Kind != "http" || !strings.Contains(l[0].Message, "404 page not found") {
		t.Errorf("kept %+v, want only the foreign 404", l)
	}
}

// In a pod behind a proxy, jobs reach the cluster's own API and services
// directly.
func TestJobsInAPodBypassTheProxyForTheCluster(t *testing.T) {
	for _, k := range proxyEnv {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	if env := proxyVars(); len(env) != 0 {
		t.Errorf("no proxy configured, yet jobs get %q", env)
	}
	t.Setenv("https_proxy", "http://proxy:3128")
	t.Setenv("NO_PROXY", ".corp")
	want := []string{"https_proxy=http://proxy:3128", "NO_PROXY=.corp,10.96.0.1,.svc,.cluster.local", "no_proxy=.corp,10.96.0.1,.svc,.cluster.local"}
	if env := proxyVars(); !slices.Equal(env, want) {
		t.Errorf("jobs get %q, want %q", env, want)
	}
}
