// Package localcluster runs a real Kubernetes API server on loopback: etcd
// and kube-apiserver as child processes, started the way controller-runtime's
// envtest starts them (envtest is what does it). There is no kubelet, no
// scheduler and no controller manager: objects are stored and served, admitted
// and validated, but no pod ever runs. That is what the helm plugin's tests and
// a local install's sandbox need.
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
