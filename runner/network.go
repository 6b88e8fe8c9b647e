package runner

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// proxyEnv are the variables that name a proxy. Jobs get the runner's, so
// terraform, helm and registry pulls leave the account as the runner does.
var proxyEnv = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"}

// certDirs are the directories Go's crypto/x509 reads on Linux when
// SSL_CERT_DIR is not set; jobs get them after the runner's CA directory.
var certDirs = []string{"/etc/ssl/certs", "/etc/pki/tls/certs"}

// caDirName is the directory under the work directory that holds the CA
// bundle jobs trust (SSL_CERT_DIR).
const caDirName = "ca"

// ProxyError is a proxy's refusal of a CONNECT to the gateway.
type ProxyError struct {
	Proxy, Target, Status string
}

func (e *ProxyError) Error() string {
	return fmt.Sprintf("the proxy %s answered %q to CONNECT %s", e.Proxy, e.Status, e.Target)
}

// loadCABundle reads a PEM file of CA certificates and returns the system's
// roots with them added.
func loadCABundle(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CA bundle: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA bundle %s: holds no PEM certificate", path)
	}
	return pool, nil
}

// transport is how the runner reaches the gateway: through the proxy the
// environment names (HTTPS_PROXY, NO_PROXY), trusting the system's roots and
// the CA bundle, with a proxy's refusal as a *ProxyError.
func (cfg Config) transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = http.ProxyFromEnvironment
	if cfg.caPool != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: cfg.caPool, MinVersion: tls.VersionTLS12}
	}
	t.OnProxyConnectResponse = func(_ context.Context, proxy *url.URL, req *http.Request, resp *http.Response) error {
		if resp.StatusCode/100 == 2 {
			return nil
		}
		return &ProxyError{Proxy: proxy.Host, Target: req.Host, Status: resp.Status}
	}
	return t
}

// inCluster are the addresses that only resolve, or only route, inside the
// Kubernetes cluster a runner's pod runs in: never through a proxy.
func inCluster() []string {
	host := os.Getenv("KUBERNETES_SERVICE_HOST")
	if host == "" {
		return nil
	}
	return []string{host, ".svc", ".cluster.local"}
}

// proxyVars are the runner's proxy variables, for jobs. In a pod, the
// cluster's own addresses join NO_PROXY, so helm and kubectl in jobs reach
// the in-cluster API directly.
func proxyVars() []string {
	var env []string
	proxied, noProxy := false, []string{}
	for _, k := range proxyEnv {
		v, ok := os.LookupEnv(k)
		switch {
		case !ok:
		case strings.EqualFold(k, "NO_PROXY"):
			noProxy = append(noProxy, v)
		default:
			proxied = proxied || v != ""
			env = append(env, k+"="+v)
		}
	}
	if proxied {
		noProxy = append(noProxy, inCluster()...)
	}
	if l := strings.Trim(strings.Join(noProxy, ","), ","); l != "" {
		env = append(env, "NO_PROXY="+l, "no_proxy="+l)
	}
	return env
}

// networkEnv is what jobs get of the runner's network settings: the proxy
// variables, and the CA bundle as a certificate directory ahead of the
// system's (SSL_CERT_DIR, which Go programs such as terraform and the job
// processes read).
func (cfg Config) networkEnv(workDir string) ([]string, error) {
	env := proxyVars()
	if cfg.CABundle == "" {
		return env, nil
	}
	dir := filepath.Join(workDir, caDirName)
	pem, err := os.ReadFile(cfg.CABundle)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "outpost-ca-bundle.pem"), pem, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("CA bundle for jobs: %w", err)
	}
	dirs := certDirs
	if d := os.Getenv("SSL_CERT_DIR"); d != "" {
		dirs = strings.Split(d, ":")
	}
	return append(env, "SSL_CERT_DIR="+strings.Join(append([]string{dir}, dirs...), ":")), nil
}
