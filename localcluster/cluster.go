package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/outpost-dev/outpost/internal/syncio"
)

// Defaults of Options.
const (
	DefaultStartTimeout = 2 * time.Minute
	DefaultStopTimeout  = 30 * time.Second
)

// Files and directories of a cluster, in its directory.
const (
	KubeconfigFile = "kubeconfig"
	etcdDir        = "etcd"
	certsDir       = "certs"
)

// Options configure Start. Zero values take the defaults.
type Options struct {
	// BinaryAssetsDir holds etcd and kube-apiserver. Default: OUTPOST_KUBE_ASSETS,
	// then AssetsPath in the working directory or one of its parents
	// (FindAssets).
	BinaryAssetsDir string
	// Dir holds the cluster's files (etcd/, certs/, kubeconfig; default: a new temporary directory).
	// Start empties it of an earlier cluster's; Stop removes them (and the directory Start made).
	Dir string
	// Output receives what etcd and kube-apiserver write. Default: nothing is
	// kept but the end of it, which a failed start quotes.
	Output io.Writer
	// StartTimeout bounds each of etcd's and kube-apiserver's starts (default 2 minutes, not envtest's
	// 20 s: a loaded two-core machine needs more); StopTimeout each stop before a kill (default 30 s).
	StartTimeout, StopTimeout time.Duration
	// Node, when set, adds a node that runs pods (node.go): containerd, the
	// kubelet, kube-scheduler and kube-controller-manager. It needs root and
	// `scripts/tools.sh node`; Start fails naming what is missing.
	Node *NodeOptions
}

// Cluster is a running etcd + kube-apiserver pair.
type Cluster struct {
	env            *envtest.Environment
	dir            string
	ownDir         bool
	kubeconfig     []byte
	kubeconfigPath string
	node           *Node

	stopOnce sync.Once
	stopErr  error
}

// quietControllerRuntime: envtest logs through controller-runtime's global
// logger, which prints a warning with a stack trace when nobody set it within
// 30 seconds. The first Start sets it to discard; a program that wants that
// log sets its own logger after Start.
var quietControllerRuntime sync.Once

// Start starts etcd, then kube-apiserver, on loopback ports, and returns once
// the API server serves the "default" namespace. A missing binary is an error
// naming where Start looked and how to build the binaries.
func Start(opts Options) (*Cluster, error) {
	assets, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	c, err := newCluster(opts.Dir)
	if err != nil {
		return nil, err
	}
	quietControllerRuntime.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	etcdOut, apiOut := &tail{}, &tail{}
	if opts.Output != nil {
		opts.Output = &syncio.Writer{W: opts.Output} // the four streams write into one writer
	}
	c.environment(assets, opts, etcdOut, apiOut)

	// The Environment makes a user in system:masters (cluster-admin) and
	// its kubeconfig.
	if _, err := c.env.Start(); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("starting etcd and kube-apiserver from %s: %w%s%s", assets, err,
			etcdOut.quote("etcd"), apiOut.quote("kube-apiserver"))
	}
	c.kubeconfig = c.env.KubeConfig
	c.kubeconfigPath = filepath.Join(c.dir, KubeconfigFile)
	if err := WriteFile(c.kubeconfigPath, c.kubeconfig); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	if opts.Node != nil {
		ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout)
		defer cancel()
		if _, err := startNode(ctx, c, assets, opts.Node, opts.Output, opts.StopTimeout); err != nil {
			return nil, errors.Join(err, c.Stop())
		}
	}
	return c, nil
}

// prepare finds the binaries (it returns their directory), checks those a
// node needs, and fills in the default timeouts.
func (opts *Options) prepare() (string, error) {
	configured := opts.BinaryAssetsDir
	if configured == "" {
		configured = os.Getenv(EnvAssets)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	assets, err := FindAssets(configured, wd)
	if err != nil {
		return "", err
	}
	if opts.Node != nil {
		if err := CheckNode(assets); err != nil {
			return "", err
		}
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	return assets, nil
}

// environment sets up the envtest Environment that runs etcd and
// kube-apiserver from assets, their output kept in etcdOut and apiOut.
func (c *Cluster) environment(assets string, opts Options, etcdOut, apiOut *tail) {
	useExisting := false
	c.env = &envtest.Environment{
		// Only what this package found: KUBEBUILDER_ASSETS, TEST_ASSET_*
		// and USE_EXISTING_CLUSTER, which envtest reads, change nothing.
		BinaryAssetsDirectory:    assets,
		UseExistingCluster:       &useExisting,
		ControlPlaneStartTimeout: opts.StartTimeout,
		ControlPlaneStopTimeout:  opts.StopTimeout,
	}
	etcd := &envtest.Etcd{}
	c.env.ControlPlane.Etcd = etcd
	etcd.Path = filepath.Join(assets, "etcd")
	etcd.DataDir = filepath.Join(c.dir, etcdDir)
	etcd.Out, etcd.Err = output(etcdOut, opts.Output), output(etcdOut, opts.Output)
	api := c.env.ControlPlane.GetAPIServer()
	api.Path = filepath.Join(assets, "kube-apiserver")
	api.CertDir = filepath.Join(c.dir, certsDir)
	api.Out, api.Err = output(apiOut, opts.Output), output(apiOut, opts.Output)
	advertise(api, opts.Node != nil)
	c.env.ControlPlane.KubectlPath = filepath.Join(assets, "kubectl") // never run
}

// advertise sets the addresses kube-apiserver uses: a node's InternalIP
// (the kubelet's host name resolves nowhere); with no node and no default
// route (a network namespace of loopback only), where kube-apiserver would
// stop for want of an address to advertise, a documentation address, since
// nothing reaches it there.
func advertise(api *envtest.APIServer, node bool) {
	switch {
	case node:
		api.Configure().Set("kubelet-preferred-address-types", "InternalIP")
	case !hasDefaultRoute():
		api.Configure().Set("advertise-address", noRouteAdvertiseAddress)
	}
}

// newCluster makes the cluster's directory (a temporary one when dir is
// ""), emptied of an earlier cluster's files.
func newCluster(dir string) (*Cluster, error) {
	c := &Cluster{dir: dir}
	var err error
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "outpost-cluster-"); err != nil {
			return nil, fmt.Errorf("cluster directory: %w", err)
		}
		c.ownDir = true
	} else if c.dir, err = filepath.Abs(c.dir); err != nil {
		return nil, fmt.Errorf("cluster directory %s: %w", dir, err)
	}
	if !c.ownDir {
		// A fresh cluster every time: what a cluster killed earlier left goes.
		c.removeFiles()
	}
	for _, d := range []string{c.dir, filepath.Join(c.dir, etcdDir), filepath.Join(c.dir, certsDir)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			c.removeFiles()
			return nil, fmt.Errorf("cluster directory: %w", err)
		}
	}
	return c, nil
}

// Kubeconfig returns the kubeconfig of the cluster's admin user.
func (c *Cluster) Kubeconfig() []byte { return c.kubeconfig }

// KubeconfigPath is the file holding Kubeconfig (mode 0600), in the
// cluster's directory.
func (c *Cluster) KubeconfigPath() string { return c.kubeconfigPath }

// RESTConfig returns a new client configuration for the cluster's admin
// user.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.env.Config) }

// Server is the API server's URL (https://127.0.0.1:<port>).
func (c *Cluster) Server() string { return strings.TrimSuffix(c.env.Config.Host, "/") }

// Node is the cluster's node, nil without Options.Node.
func (c *Cluster) Node() *Node { return c.node }

// Dir is the directory holding the cluster's files.
func (c *Cluster) Dir() string { return c.dir }

// Stop stops the node, if any, then kube-apiserver, then etcd, and removes
// the cluster's files. Calling it again returns the first call's result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		if c.node != nil {
			errs = append(errs, c.node.stop())
		}
		if c.env != nil {
			// The control plane stops the API server before etcd.
			if err := c.env.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stopping etcd and kube-apiserver: %w", err))
			}
		}
		c.stopErr = errors.Join(errs...)
		c.removeFiles()
	})
	return c.stopErr
}

func (c *Cluster) removeFiles() {
	// Never remove through a mount a killed node left.
	_ = unmountUnder(c.dir)
	if c.ownDir {
		_ = os.RemoveAll(c.dir)
		return
	}
	for _, name := range []string{etcdDir, certsDir, nodeDir, KubeconfigFile} {
		_ = os.RemoveAll(filepath.Join(c.dir, name))
	}
}

// WriteFile writes a kubeconfig (or any secret) to path with mode 0600,
// through a temporary file and a rename, so a reader never sees half of it:
// a waiter may take the file's existence as "the cluster is ready".
func WriteFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// output is where a process writes: its tail, and w when given.
func output(t *tail, w io.Writer) io.Writer {
	if w == nil {
		return t
	}
	return io.MultiWriter(t, w)
}

// tail keeps the last bytes a process wrote, for the error of a failed
// start.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 4 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// quote is "; <name>'s last output: …", or nothing when it wrote nothing.
func (t *tail) quote(name string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) == 0 {
		return ""
	}
	return fmt.Sprintf("\n--- %s's last output:\n%s", name, t.buf)
}

// noRouteAdvertiseAddress is advertised when there is no default route
// (TEST-NET-1: routed nowhere).
const noRouteAdvertiseAddress = "192.0.2.1"

// hasDefaultRoute says whether the kernel has an IPv4 or IPv6 default route,
// where kube-apiserver looks for one (assumed so when it cannot tell).
func hasDefaultRoute() bool {
	v4, err4 := os.ReadFile("/proc/net/route")
	v6, err6 := os.ReadFile("/proc/net/ipv6_route")
	if err4 != nil && err6 != nil {
		return true
	}
	for _, l := range strings.Split(string(v4), "\n")[1:] {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "00000000" {
			return true
		}
	}
	for _, l := range strings.Split(string(v6), "\n") {
		if f := strings.Fields(l); len(f) > 9 && f[0] == strings.Repeat("0", 32) && f[1] == "00" && f[9] != "lo" {
			return true
		}
	}
	return false
}
