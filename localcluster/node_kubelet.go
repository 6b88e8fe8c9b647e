package localcluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// kubeletPort is the kubelet's port on the gateway address (a node of its
// own per subnet, so no two kubelets share an address).
const kubeletPort = 10250

// kubeletConfig is the kubelet's KubeletConfiguration: cgroupfs without
// per-QoS cgroups or node allocatable enforcement (nothing of the host's
// cgroups changes), cgroup v1 allowed, anonymous access allowed to all (the
// API server reaches it without a client certificate), eviction and image
// garbage collection all but off (the disk may be fairly full), and no
// iptables chains of its own.
func (n *Node) kubeletConfig() ([]byte, error) {
	conf := map[string]any{
		"apiVersion":               "kubelet.config.k8s.io/v1beta1",
		"kind":                     "KubeletConfiguration",
		"address":                  n.gateway.String(),
		"port":                     kubeletPort,
		"healthzPort":              0,
		"readOnlyPort":             0,
		"failCgroupV1":             false,
		"cgroupDriver":             "cgroupfs",
		"cgroupsPerQOS":            false,
		"enforceNodeAllocatable":   []string{},
		"failSwapOn":               false,
		"containerRuntimeEndpoint": "unix://" + n.socket,
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": true},
			"webhook":   map[string]any{"enabled": false},
		},
		"authorization": map[string]any{"mode": "AlwaysAllow"},
		"evictionHard": map[string]string{
			"memory.available": "1Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%", "imagefs.available": "1%",
		},
		"imageGCHighThresholdPercent":   100,
		"imageGCLowThresholdPercent":    99,
		"localStorageCapacityIsolation": false,
		"protectKernelDefaults":         false,
		"makeIPTablesUtilChains":        false,
		"podLogsDir":                    n.path(podLogsDir),
		"volumePluginDir":               n.path(kubeletDir, "volume-plugins"),
		"shutdownGracePeriod":           "0s",
		"serializeImagePulls":           false,
		"registerNode":                  true,
	}
	return json.MarshalIndent(conf, "", "  ")
}

// startKubelet starts the kubelet, registering the node NodeName with the
// gateway address as its InternalIP (the kubelet refuses a loopback one).
func (n *Node) startKubelet(c *Cluster) error {
	conf, err := n.kubeletConfig()
	if err != nil {
		return err
	}
	confPath := n.path("kubelet.json")
	if err := os.WriteFile(confPath, conf, 0o600); err != nil {
		return fmt.Errorf("kubelet configuration: %w", err)
	}
	return n.start("kubelet", filepath.Join(n.assets, "kubelet"),
		"--config="+confPath,
		"--kubeconfig="+c.kubeconfigPath,
		"--root-dir="+n.path(kubeletDir),
		"--hostname-override="+NodeName,
		"--node-ip="+n.gateway.String(),
	)
}

// startScheduler starts kube-scheduler: no leader election, no port.
func (n *Node) startScheduler(c *Cluster) error {
	return n.start("kube-scheduler", filepath.Join(n.assets, "kube-scheduler"),
		"--kubeconfig="+c.kubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
	)
}

// startControllerManager starts kube-controller-manager with only the
// controllers a Deployment needs (the node lifecycle controller lifts the
// not-ready taint a node registers with), a Service's EndpointSlices
// (ProxyService), a Job (helm's hooks), a PodDisruptionBudget's status, a
// claim bound to a volume made beforehand, and the garbage collector (what
// a deleted owner owned): no leader election, no port.
func (n *Node) startControllerManager(c *Cluster) error {
	return n.start("kube-controller-manager", filepath.Join(n.assets, "kube-controller-manager"),
		"--kubeconfig="+c.kubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers=deployment-controller,replicaset-controller,node-lifecycle-controller,"+
			"endpointslice-controller,job-controller,disruption-controller,persistentvolume-binder-controller,garbage-collector-controller",
		"--use-service-account-credentials=false",
	)
}
