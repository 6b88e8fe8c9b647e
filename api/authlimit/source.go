package authlimit

import (
	"net"
	"net/http"
	"strings"
)

// Source is the address a request comes from: its peer's, unless the peer is
// a trusted proxy; then the nearest address in X-Forwarded-For that is not
// one (a client cannot choose its source by sending the header itself). An
// IPv6 source is its /64, which one client holds whole.
func (l *Limiter) Source(r *http.Request) string { return network(l.source(r)) }

// network is an IPv6 address's /64, anything else as it is.
func network(addr string) string {
	ip := net.ParseIP(addr)
	if ip == nil || ip.To4() != nil {
		return addr
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}

func (l *Limiter) source(r *http.Request) string {
	addr := peer(r.RemoteAddr)
	if !l.trusted(addr) {
		return addr
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if net.ParseIP(hop) == nil {
			break // not an address: believe nothing further
		}
		addr = hop
		if !l.trusted(hop) {
			break
		}
	}
	return addr
}

func peer(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}

func (l *Limiter) trusted(addr string) bool {
	ip := net.ParseIP(addr)
	for _, n := range l.cfg.TrustedProxies {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// ParseCIDRs reads a comma-separated list of CIDRs (a bare address is a /32
// or /128).
func ParseCIDRs(list string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			if ip := net.ParseIP(s); ip != nil && ip.To4() != nil {
				s += "/32"
			} else {
				s += "/128"
			}
		}
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
