package e2e

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
)

// spreadProxy is a TCP proxy in front of replicas of a server, as a load
// balancer is: it hands each new connection to the next replica in turn,
// and to the one after when that one refuses it (a replica killed).
type spreadProxy struct {
	ln      net.Listener
	targets []string
	next    atomic.Uint64
}

func newSpreadProxy(t testing.TB, targets ...string) *spreadProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &spreadProxy{ln: ln, targets: targets}
	t.Cleanup(func() { ln.Close() })
	go p.serve()
	return p
}

func (p *spreadProxy) addr() string { return p.ln.Addr().String() }

func (p *spreadProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up := p.dial()
		if up == nil {
			c.Close()
			continue
		}
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

// dial connects to the next replica that accepts, nil when none does.
func (p *spreadProxy) dial() net.Conn {
	start := p.next.Add(1)
	for i := range uint64(len(p.targets)) {
		if c, err := net.Dial("tcp", p.targets[(start+i)%uint64(len(p.targets))]); err == nil {
			return c
		}
	}
	return nil
}
