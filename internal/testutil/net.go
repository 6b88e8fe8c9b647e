package testutil

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// FreeAddr is a loopback address whose port was free a moment ago (and so,
// until something takes it, one that refuses connections).
func FreeAddr(t testing.TB) string {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

var (
	handedOutMu sync.Mutex
	handedOut   = map[int]bool{}
)

// FreePort is a TCP port free now on every interface, chosen below the
// kernel's ephemeral range: a port given to a process started later must not
// be taken meanwhile by some client's outgoing connection (":0" picks from
// that range). No port is handed out twice in one test binary.
func FreePort() (int, error) {
	lo, hi := freeRange()
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for range 200 {
		p := lo + rand.IntN(hi-lo)
		if handedOut[p] {
			continue
		}
		ln, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		ln.Close()
		handedOut[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("no free port in [%d, %d) after 200 tries", lo, hi)
}

// freeRange is where FreePort picks from: below the kernel's range for
// outgoing ports (from 20000), or above it when too little is left below.
func freeRange() (lo, hi int) {
	first, last := 32768, 60999 // Linux's default
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			a, errA := strconv.Atoi(f[0])
			z, errZ := strconv.Atoi(f[1])
			if errA == nil && errZ == nil {
				first, last = a, z
			}
		}
	}
	if first-20000 >= 1000 {
		return 20000, first
	}
	return last + 1, 65536
}
