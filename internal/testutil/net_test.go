package testutil

import (
	"fmt"
	"net"
	"os"
	"testing"
)

// Ports handed out lie outside the kernel's outgoing range, are never the
// same twice, and can be listened on.
func TestFreePortIsOutsideTheEphemeralRangeAndNotRepeated(t *testing.T) {
	first, last := 32768, 60999
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		fmt.Sscan(string(b), &first, &last)
	}
	seen := map[int]bool{}
	for range 300 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p >= first && p <= last {
			t.Fatalf("port %d is in the kernel's outgoing range [%d, %d]", p, first, last)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	ln, err := net.Listen("tcp", FreeAddr(t))
	if err != nil {
		t.Fatalf("listen on a free address: %v", err)
	}
	ln.Close()
}
