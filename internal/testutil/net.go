package testutil

import (
	"net"
	"testing"
)

// FreeAddr is a loopback address whose port was free a moment ago (and so,
// until something takes it, one that refuses connections).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
