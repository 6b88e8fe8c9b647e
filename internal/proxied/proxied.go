package proxied

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/pires/go-proxyproto"

	"github.com/outpost-dev/outpost/api/authlimit"
)

// Resolve bounds how often the host names are looked up again, and how
// long a lookup may take (it holds the listener's Accept).
const Resolve = time.Second

// Trusted is the peers whose PROXY protocol header is believed.
type Trusted struct {
	nets  []*net.IPNet
	hosts []string
	// Lookup resolves a host name (net.DefaultResolver's by default).
	Lookup func(ctx context.Context, host string) ([]string, error)

	mu    sync.Mutex
	known map[string]bool // the hosts' addresses, as of at
	at    time.Time
}

// Parse reads a comma-separated list of CIDRs, addresses and host names;
// an empty list trusts no one (Listen then changes nothing).
func Parse(list string) (*Trusted, error) {
	t := &Trusted{Lookup: net.DefaultResolver.LookupHost}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
		case strings.ContainsAny(s, "/:") || net.ParseIP(s) != nil:
			nets, err := authlimit.ParseCIDRs(s)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", s, err)
			}
			t.nets = append(t.nets, nets...)
		case strings.ContainsAny(s, " \t") || strings.Trim(s, "0123456789.") == "":
			return nil, fmt.Errorf("%q: not a CIDR, an address or a host name", s)
		default:
			t.hosts = append(t.hosts, s)
		}
	}
	return t, nil
}

// Empty says whether t trusts no one.
func (t *Trusted) Empty() bool { return t == nil || len(t.nets)+len(t.hosts) == 0 }

// Listen wraps ln: a connection from a trusted peer must start with a PROXY
// protocol header, which gives its RemoteAddr; any other is ln's own.
func (t *Trusted) Listen(ln net.Listener) net.Listener {
	if t.Empty() {
		return ln
	}
	return &proxyproto.Listener{Listener: ln, ConnPolicy: t.policy}
}

func (t *Trusted) policy(o proxyproto.ConnPolicyOptions) (proxyproto.Policy, error) {
	if a, ok := o.Upstream.(*net.TCPAddr); ok && t.Trusts(a.IP) {
		return proxyproto.REQUIRE, nil
	}
	return proxyproto.SKIP, nil
}

// Trusts says whether ip is a trusted peer.
func (t *Trusted) Trusts(ip net.IP) bool {
	for _, n := range t.nets {
		if n.Contains(ip) {
			return true
		}
	}
	if len(t.hosts) == 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.known[ip.String()] && time.Since(t.at) >= Resolve {
		t.resolve()
	}
	return t.known[ip.String()]
}

// resolve looks the host names up again; one that fails keeps no address
// (a balancer not started yet).
func (t *Trusted) resolve() {
	ctx, cancel := context.WithTimeout(context.Background(), Resolve)
	defer cancel()
	t.known, t.at = map[string]bool{}, time.Now()
	for _, h := range t.hosts {
		addrs, _ := t.Lookup(ctx, h)
		for _, a := range addrs {
			if ip := net.ParseIP(a); ip != nil {
				t.known[ip.String()] = true
			}
		}
	}
}
