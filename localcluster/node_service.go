package localcluster

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listers "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// ServiceProxy forwards connections made on the host to a Service of a
// cluster with a node, as kube-proxy would (the node runs none): each new
// connection goes to one of the ready endpoints of the Service's port, at
// random, from the EndpointSlices the endpointslice controller keeps (to a
// serving, terminating one only when none is ready, as kube-proxy does), and
// stays with it until either side closes it, as conntrack keeps it. So a pod
// that stops being ready, or is being deleted, gets no new connection, while
// those it has carry on.
type ServiceProxy struct {
	ln     net.Listener
	slices listers.EndpointSliceLister
	port   string
	stop   chan struct{}
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
	once   sync.Once
	err    error
}

// ProxyService listens on listen (host:port; port 0 picks one) and forwards
// to the port named port (the Service port's name, "" for an unnamed one) of
// the Service namespace/name. The cluster must have a node (pods' addresses
// are on its bridge). Close stops it.
func (c *Cluster) ProxyService(namespace, name, port, listen string) (*ServiceProxy, error) {
	if c.node == nil {
		return nil, errors.New("a service proxy needs a cluster with a node (Options.Node)")
	}
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = discoveryv1.LabelServiceName + "=" + name
		}))
	inf := factory.Discovery().V1().EndpointSlices()
	p := &ServiceProxy{slices: inf.Lister(), port: port, stop: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	informer := inf.Informer()
	factory.Start(p.stop)
	synced := make(chan bool, 1)
	go func() { synced <- cache.WaitForCacheSync(p.stop, informer.HasSynced) }()
	select {
	case <-synced:
	case <-time.After(time.Minute):
		close(p.stop)
		return nil, fmt.Errorf("service proxy %s/%s: the EndpointSlices did not sync within a minute", namespace, name)
	}
	if p.ln, err = net.Listen("tcp", listen); err != nil {
		close(p.stop)
		return nil, fmt.Errorf("service proxy %s/%s: %w", namespace, name, err)
	}
	p.wg.Add(1)
	go p.serve()
	c.node.addProxy(p)
	return p, nil
}

// Addr is the address the proxy listens on.
func (p *ServiceProxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting, cuts every connection and stops watching; the
// node's Stop closes the proxies left open (a watch still open would hold
// kube-apiserver's stop).
func (p *ServiceProxy) Close() error {
	p.once.Do(func() {
		p.err = p.ln.Close()
		p.mu.Lock()
		close(p.stop)
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p.err
}

func (p *ServiceProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

// forward connects c to an endpoint, or closes it when there is none (as a
// Service without endpoints rejects connections).
func (p *ServiceProxy) forward(c net.Conn) {
	defer p.wg.Done()
	addr, err := p.endpoint()
	var up net.Conn
	if err == nil {
		up, err = net.DialTimeout("tcp", addr, 5*time.Second)
	}
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	done := make(chan struct{})
	go func() { io.Copy(up, c); closeWrite(up); close(done) }()
	io.Copy(c, up)
	closeWrite(c)
	<-done
	p.untrack(c, up)
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// track records a forwarded pair, unless the proxy is closing.
func (p *ServiceProxy) track(c, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stop:
		c.Close()
		up.Close()
		return false
	default:
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	return true
}

func (p *ServiceProxy) untrack(c, up net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
	c.Close()
	up.Close()
}

// endpoint picks an address of a ready endpoint of the port, or of a serving
// terminating one when none is ready.
func (p *ServiceProxy) endpoint() (string, error) {
	slices, err := p.slices.List(labels.Everything())
	if err != nil {
		return "", err
	}
	var ready, serving []string
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		port := slicePort(s, p.port)
		if port == 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if len(e.Addresses) == 0 {
				continue
			}
			addr := net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(port)))
			switch cond := e.Conditions; {
			case cond.Ready == nil || *cond.Ready: // unknown is ready, as the API says
				ready = append(ready, addr)
			case cond.Serving != nil && *cond.Serving:
				serving = append(serving, addr)
			}
		}
	}
	if len(ready) == 0 {
		ready = serving
	}
	if len(ready) == 0 {
		return "", errors.New("no endpoint")
	}
	return ready[rand.IntN(len(ready))], nil
}

func slicePort(s *discoveryv1.EndpointSlice, name string) int32 {
	for _, sp := range s.Ports {
		if sp.Port != nil && sp.Name != nil && *sp.Name == name {
			return *sp.Port
		}
	}
	return 0
}
