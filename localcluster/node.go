package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/outpost-dev/outpost/runner/plugins/toolpath"
)

// NodeBinaries are the files the assets directory must also hold for a node.
var NodeBinaries = []string{"kubelet", "kube-controller-manager", "kube-scheduler"}

// NodeName is the name the node registers under.
const NodeName = "outpost-node"

// Defaults of NodeOptions.
const (
	DefaultBridge = "opst0"
	DefaultSubnet = "10.244.0.0/24"
	// PauseImage is the pod sandbox image: built from pause/pause.c and
	// imported at start, never pulled.
	PauseImage = "outpost.local/pause:1"
)

// nodeDir holds the node's files in the cluster's directory.
const nodeDir = "node"

// nodeHint says how to get what a node needs.
const nodeHint = "run `bash scripts/tools.sh node` as root (it builds kubelet, kube-controller-manager and kube-scheduler and installs Debian's containerd, runc and containernetworking-plugins)"

// ErrNodeUnsupported: this host or user cannot run a node.
var ErrNodeUnsupported = errors.New("a local node cannot run here")

// NodeOptions configure the node Options.Node asks for.
type NodeOptions struct {
	// Bridge is the name of the pods' bridge (default opst0); Subnet the
	// pods' network (default 10.244.0.0/24), whose first address is the
	// bridge's own: the gateway, the node's IP and the kubelet's address.
	// Two nodes at once need different ones.
	Bridge, Subnet string
	// HTTPRegistries are registry hosts (host:port) containerd pulls from
	// over plain HTTP; Node.TrustHTTPRegistry adds more later.
	HTTPRegistries []string
}

// Node is a kubelet with its containerd, and the scheduler and controller
// manager that put pods on it, of a Cluster started with Options.Node.
type Node struct {
	dir             string
	bridge          string
	subnet          *net.IPNet
	gateway         net.IP
	socket          string
	assets          string
	procs           []*process // in start order; stopped in reverse
	sysctls         map[string]string
	ownBridge       bool
	snapshotterName string
	out             io.Writer
	stopWait        time.Duration
	proxiesMu       sync.Mutex
	proxies         []*ServiceProxy // ProxyService's, closed by stop
}

func (n *Node) addProxy(p *ServiceProxy) {
	n.proxiesMu.Lock()
	n.proxies = append(n.proxies, p)
	n.proxiesMu.Unlock()
}

// Gateway is the bridge's address on the host: pods reach the host there.
func (n *Node) Gateway() net.IP { return n.gateway }

// Subnet is the pods' network.
func (n *Node) Subnet() *net.IPNet { return n.subnet }

// ContainerdSocket is the node's containerd socket (ctr -a, crictl -r).
func (n *Node) ContainerdSocket() string { return n.socket }

// CheckNode says what this host lacks to run a node: root, the packages
// (containerd, runc, ctr, the CNI plugins, gcc for the pause image) or the
// binaries in assets. The error wraps ErrNodeUnsupported and says how to
// get them.
func CheckNode(assets string) error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (containerd, runc and the kubelet need it)")
	}
	for _, cmd := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "gcc", "ip", "mount", "umount"} {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, cmd+" on PATH")
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, p)); err != nil {
			missing = append(missing, "the CNI plugin "+filepath.Join(cniBinDir, p))
		}
	}
	for _, b := range NodeBinaries {
		if err := toolpath.Executable(filepath.Join(assets, b)); err != nil {
			missing = append(missing, fmt.Sprintf("%s in %s", b, assets))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %v; %s", ErrNodeUnsupported, missing, nodeHint)
	}
	return nil
}

// startNode starts the node of c: containerd, the kubelet, then the
// scheduler and the controller manager, and waits for the node to be Ready.
func startNode(ctx context.Context, c *Cluster, assets string, opts *NodeOptions, out io.Writer, stopWait time.Duration) (*Node, error) {
	if err := CheckNode(assets); err != nil {
		return nil, err
	}
	n := &Node{dir: filepath.Join(c.dir, nodeDir), bridge: opts.Bridge, assets: assets, out: out, stopWait: stopWait}
	if err := n.configure(opts); err != nil {
		return nil, err
	}
	c.node = n // from here on, Stop cleans up what was started
	steps := []struct {
		what string
		do   func() error
	}{
		{"the bridge", n.makeBridge},
		{"the kernel settings", n.setSysctls},
		{"containerd", func() error { return n.startContainerd(ctx) }},
		{"the pause image", func() error { return n.importPause(ctx) }},
		{"the kubelet", func() error { return n.startKubelet(c) }},
		{"kube-scheduler", func() error { return n.startScheduler(c) }},
		{"kube-controller-manager", func() error { return n.startControllerManager(c) }},
		{"the node's readiness", func() error { return n.waitReady(ctx, c) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return nil, fmt.Errorf("node: %s: %w", s.what, err)
		}
	}
	return n, nil
}

// stop closes the service proxies, stops the node's processes (the
// controller manager first, containerd last, after removing the pods it
// runs), then unmounts what they left under the node's directory, deletes
// the bridge and restores the kernel settings.
func (n *Node) stop() error {
	var errs []error
	n.proxiesMu.Lock()
	for _, p := range n.proxies {
		p.Close()
	}
	n.proxies = nil
	n.proxiesMu.Unlock()
	for i := len(n.procs) - 1; i >= 0; i-- {
		p := n.procs[i]
		if p.name == "containerd" && p.running() {
			if err := n.removePods(); err != nil {
				errs = append(errs, fmt.Errorf("removing the pods: %w", err))
			}
		}
		if err := p.stop(n.stopWait); err != nil {
			errs = append(errs, err)
		}
	}
	n.procs = nil
	if err := unmountUnder(n.dir); err != nil {
		errs = append(errs, err)
	}
	if err := n.deleteBridge(); err != nil {
		errs = append(errs, err)
	}
	if err := n.restoreSysctls(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping the node: %w", err)
	}
	return nil
}
