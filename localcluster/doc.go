// Package localcluster runs a real Kubernetes API server on loopback: etcd
// and kube-apiserver as child processes, started the way controller-runtime's
// envtest starts them (envtest is what does it). By default there is no
// kubelet, no scheduler and no controller manager: objects are stored and
// served, admitted and validated, but no pod ever runs. That is what the helm
// plugin's tests and a local install's sandbox need.
//
// Options.Node adds a node that runs pods (node*.go), for tests that need real
// containers: pod logs read through the API (which asks the kubelet), rolling
// updates gated by readiness probes. As child processes, with every file under
// the cluster's directory: containerd 1.6 (Debian's) with its own
// configuration, state and socket (never the host's /run/containerd socket),
// its CRI plugin on cgroupfs (the host may be cgroup v1) and overlayfs (native
// when an overlay cannot be mounted there); a kubelet (node NodeName, cgroup
// v1 allowed, no per-QoS cgroups, eviction all but off, anonymous access
// allowed to all); kube-scheduler; and kube-controller-manager running only
// the deployment, replicaset, node-lifecycle, endpointslice, job,
// disruption, persistentvolume-binder and garbage-collector controllers
// (no volume provisioner: a claim binds to a volume made beforehand). Pods get
// addresses from a bridge of the node's own (NodeOptions.Bridge, default
// opst0, made before the kubelet starts and deleted on Stop) with host-local
// IPAM and no masquerading; the bridge's first address (Node.Gateway) is the
// host for the pods, the node's InternalIP and the kubelet's address, which
// the API server is told to prefer. The pod sandbox image (PauseImage) is
// pause/pause.c compiled statically with gcc and imported at start, so
// nothing is pulled from the internet; other images come from registries
// containerd may reach over plain HTTP (NodeOptions.HTTPRegistries,
// Node.TrustHTTPRegistry) or from tarballs (Node.LoadImage, BinaryImage and
// WriteImageTarball make one from a static binary). Start waits for the node
// to be Ready and untainted; Stop stops the controller manager, the scheduler
// and the kubelet, removes the pods through the CRI, stops containerd, then
// unmounts whatever is left under the cluster's directory, deletes the bridge
// and puts back the kernel settings the kubelet insists on (kubeletSysctls).
//
// A node needs root and what `scripts/tools.sh node` provides (CheckNode says
// what is missing). Its limits: one node per bridge and subnet on a host;
// no kube-proxy, DNS or service-account tokens (envtest's API server
// disables the ServiceAccount admission plugin): a Service is reached from
// the host through Cluster.ProxyService (node_service.go), which forwards
// each connection to one of its ready endpoints as kube-proxy would; pods' OOM scores are kept at
// or above containerd's own; the kubelet still uses the host-wide
// /var/lib/kubelet/device-plugins and containerd's shims /run/containerd/s
// (sockets named by a hash of the node's own socket); anything a pod can reach
// on the gateway includes the kubelet, which allows anonymous access.
//
// The binaries come from a directory holding both (the assets directory),
// found by FindAssets: the BinaryAssetsDir option, then OUTPOST_KUBE_ASSETS,
// then .tools/kube/v1.36.3/ in the working directory or one of its parents,
// where the project's scripts/tools.sh builds them from source.
//
// A started Cluster hands out a kubeconfig (bytes, and a file written with
// mode 0600) and a *rest.Config for a user in the system:masters group, which
// is cluster-admin. Stop stops kube-apiserver, then etcd (the other order
// makes the API server hang), and removes the cluster's files.
//
// cmd/outpost-cluster runs one as a process of its own.
package localcluster
