package authlimit

import (
	"net/http"
	"testing"
	"time"
)

// clock is a settable time for the buckets' refill.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestBurstThenRefill(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	l := New(Config{Burst: 3, Every: 10 * time.Second, Now: c.now})
	for i := range 3 {
		if w := l.Wait("1.2.3.4", "opat_aaaaaaaa"); w != 0 {
			t.Fatalf("failure %d: refused (%v) within the burst", i+1, w)
		}
		l.Fail("1.2.3.4", "opat_aaaaaaaa")
	}
	if w := l.Wait("1.2.3.4", "opat_bbbbbbbb"); w != 10*time.Second {
		t.Fatalf("source over the burst: wait %v, want 10s", w)
	}
	if w := l.Wait("5.6.7.8", "opat_aaaaaaaa"); w != 10*time.Second {
		t.Fatalf("prefix over the burst: wait %v, want 10s", w)
	}
	if w := l.Wait("5.6.7.8", "opat_bbbbbbbb"); w != 0 {
		t.Fatalf("another source and prefix: wait %v, want none", w)
	}
	c.t = c.t.Add(4 * time.Second)
	if w := l.Wait("1.2.3.4", "x"); w != 6*time.Second {
		t.Fatalf("after 4s: wait %v, want 6s", w)
	}
	c.t = c.t.Add(6 * time.Second)
	if w := l.Wait("1.2.3.4", "opat_aaaaaaaa"); w != 0 {
		t.Fatalf("after a refill: wait %v, want none", w)
	}
	if got := RetryAfter(1500 * time.Millisecond); got != 2 {
		t.Fatalf("RetryAfter(1.5s) = %d, want 2", got)
	}
}

func TestKeysAreBounded(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	l := New(Config{Burst: 1, Every: time.Hour, MaxKeys: 100, Now: c.now})
	for i := range 1000 {
		l.Fail("src", string(rune('a'+i%26))+string(rune(i)))
	}
	if n := len(l.prefixes); n > 100 {
		t.Fatalf("%d prefixes remembered, want at most 100", n)
	}
	if w := l.Wait("src", "new"); w == 0 {
		t.Fatal("the source that failed 1000 times may try again")
	}
}

func TestSourceBelievesOnlyTrustedProxies(t *testing.T) {
	proxies, err := ParseCIDRs("10.0.0.0/8, 192.168.1.1")
	if err != nil {
		t.Fatal(err)
	}
	l := New(Config{TrustedProxies: proxies})
	for _, tc := range []struct{ remote, xff, want string }{
		{"203.0.113.9:5000", "1.1.1.1", "203.0.113.9"},                 // not a proxy: the header is ignored
		{"10.1.2.3:5000", "1.1.1.1", "1.1.1.1"},                        // a proxy: its client
		{"10.1.2.3:5000", "6.6.6.6, 1.1.1.1, 192.168.1.1", "1.1.1.1"},  // a chain: the nearest untrusted hop
		{"10.1.2.3:5000", "", "10.1.2.3"},                              // a proxy that says nothing
		{"10.1.2.3:5000", "junk, 10.9.9.9", "10.9.9.9"},                // stop at what is not an address
		{"192.168.1.2:80", "1.1.1.1", "192.168.1.2"},                   // a bare address is one host
		{"[2001:db8:1:2:aaaa::1]:443", "", "2001:db8:1:2::/64"},        // IPv6: the client's /64
		{"10.1.2.3:5000", "2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"}, // the same /64 behind a proxy
	} {
		r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := l.Source(r); got != tc.want {
			t.Errorf("from %s with X-Forwarded-For %q: source %s, want %s", tc.remote, tc.xff, got, tc.want)
		}
	}
	if _, err := ParseCIDRs("10.0.0.0/33"); err == nil {
		t.Error("a bad CIDR was accepted")
	}
}
