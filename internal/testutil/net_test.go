package testutil

import (
	"net"
	"testing"
)

// Ports handed out lie below the kernel's outgoing range, are never the same
// twice, and can be listened on.
func TestFreePortIsOutsideTheEphemeralRangeAndNotRepeated(t *testing.T) {
	seen := map[int]bool{}
	for range 300 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p >= ephemeralLow() || p < 20000 {
			t.Fatalf("port %d is outside [20000, %d)", p, ephemeralLow())
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
