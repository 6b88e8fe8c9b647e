package localcluster

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// cniBinDir holds Debian's CNI plugins (containernetworking-plugins).
const cniBinDir = "/usr/lib/cni"

// Paths in the node's directory.
const (
	containerdDir = "containerd" // config.toml, root/, state/, certs.d/, runc/, opt/
	cniDir        = "cni"        // the conflist; ipam/ holds host-local's leases
	kubeletDir    = "kubelet"    // the kubelet's root-dir
	podLogsDir    = "pod-logs"
	socketName    = "containerd.sock"
	unixPathMax   = 107 // a unix socket's path, without the final NUL
)

// configure checks opts and writes containerd's, the CNI's and the
// kubelet's configuration into the node's directory.
func (n *Node) configure(opts *NodeOptions) error {
	if n.bridge == "" {
		n.bridge = DefaultBridge
	}
	subnet := opts.Subnet
	if subnet == "" {
		subnet = DefaultSubnet
	}
	_, ipnet, err := net.ParseCIDR(subnet)
	if err != nil || ipnet.IP.To4() == nil {
		return fmt.Errorf("node subnet %q: want an IPv4 CIDR (%v)", subnet, err)
	}
	n.subnet = ipnet
	n.gateway = make(net.IP, 4)
	copy(n.gateway, ipnet.IP.To4())
	n.gateway[3]++
	n.socket = filepath.Join(n.dir, socketName)
	if len(n.socket) > unixPathMax {
		return fmt.Errorf("node: the containerd socket path %s is longer than %d bytes: use a shorter cluster directory", n.socket, unixPathMax)
	}
	for _, d := range []string{n.dir, n.path(containerdDir, "certs.d"), n.path(cniDir), n.path(kubeletDir), n.path(podLogsDir)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("node directory: %w", err)
		}
	}
	for _, h := range opts.HTTPRegistries {
		if err := n.TrustHTTPRegistry(h); err != nil {
			return err
		}
	}
	n.snapshotterName = n.snapshotter()
	if err := os.WriteFile(n.path(containerdDir, "config.toml"), []byte(n.containerdConfig()), 0o600); err != nil {
		return fmt.Errorf("containerd configuration: %w", err)
	}
	if err := os.WriteFile(n.path(cniDir, "10-outpost.conflist"), n.cniConfig(), 0o600); err != nil {
		return fmt.Errorf("CNI configuration: %w", err)
	}
	return nil
}

func (n *Node) path(elem ...string) string {
	return filepath.Join(append([]string{n.dir}, elem...)...)
}

// TrustHTTPRegistry lets containerd pull from host (host:port) over plain
// HTTP. It takes effect at the next pull: containerd reads the hosts
// directory each time.
func (n *Node) TrustHTTPRegistry(host string) error {
	if _, _, err := net.SplitHostPort(host); err != nil {
		return fmt.Errorf("registry host %q: want host:port: %w", host, err)
	}
	d := n.path(containerdDir, "certs.d", host)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("registry host %s: %w", host, err)
	}
	toml := fmt.Sprintf("server = %[1]q\n\n[host.%[1]q]\n  capabilities = [\"pull\", \"resolve\"]\n", "http://"+host)
	if err := os.WriteFile(filepath.Join(d, "hosts.toml"), []byte(toml), 0o600); err != nil {
		return fmt.Errorf("registry host %s: %w", host, err)
	}
	return nil
}

// containerdConfig is containerd 1.6's configuration: everything under the
// node's directory (its socket too), the CRI plugin with cgroupfs (the host
// may be cgroup v1), the CNI configuration of cniConfig, and the registry
// hosts of TrustHTTPRegistry. restrict_oom_score_adj keeps containers' OOM
// scores at or above containerd's own: the kubelet asks -998 for a pod's
// sandbox, which a host without CAP_SYS_RESOURCE (a container) refuses.
func (n *Node) containerdConfig() string {
	q := func(elem ...string) string { return strconv.Quote(n.path(elem...)) }
	return fmt.Sprintf(`version = 2
root = %s
state = %s
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = %s

[plugins."io.containerd.internal.v1.opt"]
  path = %s

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = %q
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %s
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %s
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %s
`, q(containerdDir, "root"), q(containerdDir, "state"), strconv.Quote(n.socket), q(containerdDir, "opt"),
		PauseImage, n.snapshotterName, q(containerdDir, "runc"), cniBinDir, q(cniDir), q(containerdDir, "certs.d"))
}

// cniConfig is the pods' network: a bridge of the node's own, addresses from
// its subnet (the bridge holds the first and is the pods' default route),
// no masquerading.
func (n *Node) cniConfig() []byte {
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "outpost",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": n.bridge, "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": n.path(cniDir, "ipam"),
					"ranges":  [][]map[string]string{{{"subnet": n.subnet.String(), "gateway": n.gateway.String()}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "loopback"},
		},
	}
	b, _ := json.MarshalIndent(conf, "", "  ") // maps of strings always marshal
	return b
}

// snapshotter is overlayfs when the node's directory can hold an overlay
// mount, else native (copies, slower).
func (n *Node) snapshotter() string {
	d, err := os.MkdirTemp(n.dir, ".overlay-")
	if err != nil {
		return "native"
	}
	defer os.RemoveAll(d)
	for _, s := range []string{"lower", "upper", "work", "merged"} {
		if err := os.Mkdir(filepath.Join(d, s), 0o700); err != nil {
			return "native"
		}
	}
	data := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", filepath.Join(d, "lower"), filepath.Join(d, "upper"), filepath.Join(d, "work"))
	if err := syscall.Mount("overlay", filepath.Join(d, "merged"), "overlay", 0, data); err != nil {
		return "native"
	}
	_ = syscall.Unmount(filepath.Join(d, "merged"), 0)
	return "overlayfs"
}
