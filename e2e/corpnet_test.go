package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A corporate network for a runner: a CA of the test's own, a TLS front
// that serves the gateway under a name, and an HTTP CONNECT proxy that is
// the only way to that name.

// testCA issues server certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// file writes the CA's certificate to a PEM file and returns its path.
func (ca *testCA) file(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, ca.pem, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// issue makes a server certificate for host.
func (ca *testCA) issue(t *testing.T, host string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host},
		DNSNames: []string{host}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// tlsFront serves HTTPS on loopback with a certificate and a handler the
// test swaps while the runner keeps calling.
type tlsFront struct {
	addr    string
	cert    atomic.Pointer[tls.Certificate]
	handler atomic.Pointer[http.Handler]
}

func newTLSFront(t *testing.T, cert tls.Certificate, h http.Handler) *tlsFront {
	f := &tlsFront{}
	f.set(cert, h)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		return f.cert.Load(), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*f.handler.Load()).ServeHTTP(w, r) }),
		ErrorLog: quietLog()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return f
}

func (f *tlsFront) set(cert tls.Certificate, h http.Handler) {
	f.cert.Store(&cert)
	f.handler.Store(&h)
}

// reverseTo is a handler that passes requests on to the server at base.
func reverseTo(base string) http.Handler {
	u, _ := url.Parse(base)
	return httputil.NewSingleHostReverseProxy(u)
}

// connectProxy is an HTTP CONNECT proxy on loopback that knows some host
// names (the test's DNS) and can refuse every CONNECT, as a corporate proxy
// whose rules changed.
type connectProxy struct {
	addr     string
	hosts    map[string]string // host → the address it dials
	blocked  atomic.Bool
	mu       sync.Mutex
	connects map[string]int // CONNECTs let through, by host
	open     map[net.Conn]struct{}
}

func newConnectProxy(t *testing.T, hosts map[string]string) *connectProxy {
	p := &connectProxy{hosts: hosts, connects: map[string]int{}, open: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	srv := &http.Server{Handler: p, ErrorLog: quietLog()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p
}

func (p *connectProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "this proxy only tunnels (CONNECT)", http.StatusMethodNotAllowed)
		return
	}
	if p.blocked.Load() {
		http.Error(w, "blocked by policy", http.StatusForbidden)
		return
	}
	host, _, _ := net.SplitHostPort(r.Host)
	target, ok := p.hosts[host]
	if !ok {
		http.Error(w, "no such host "+host, http.StatusBadGateway)
		return
	}
	up, err := net.Dial("tcp", target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	c, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	p.mu.Lock()
	p.connects[host]++
	p.open[c], p.open[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		up.Close()
		c.Close()
		return
	}
	go func() { io.Copy(up, buf); up.Close() }()
	go func() { io.Copy(c, up); c.Close() }()
}

// block refuses every CONNECT from now on and cuts the open tunnels.
func (p *connectProxy) block() {
	p.blocked.Store(true)
	p.cut()
}

// cut closes the open tunnels: the next calls connect (and shake hands) anew.
func (p *connectProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.open {
		c.Close()
	}
	clear(p.open)
}

// quietLog drops a test server's own log (handshakes the test means to fail).
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

func (p *connectProxy) tunnels(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.connects[host]
}
