package proxied

import (
	"net"
	"testing"
)

// A list of CIDRs, addresses and host names: each trusts what it names and
// nothing more; what is none of them is refused, naming the entry.
func TestParseAndTrusts(t *testing.T) {
	tr, err := Parse(" 10.0.0.0/8, 192.168.1.1, ::1 , localhost")
	if err != nil {
		t.Fatal(err)
	}
	for ip, want := range map[string]bool{
		"10.2.3.4": true, "192.168.1.1": true, "192.168.1.2": false, "::1": true, "::2": false,
		"127.0.0.1": true, // localhost, resolved
		"127.0.0.2": false, "203.0.113.9": false,
	} {
		if got := tr.Trusts(net.ParseIP(ip)); got != want {
			t.Errorf("Trusts(%s) = %v, want %v", ip, got, want)
		}
	}
	if empty, err := Parse(" , "); err != nil || !empty.Empty() {
		t.Errorf("an empty list: %v, %v; want one that trusts no one", empty, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "10.0.0", "lb, bad host"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
