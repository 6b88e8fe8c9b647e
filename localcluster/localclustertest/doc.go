// Package localclustertest starts local clusters (package localcluster) for
// tests. A test that needs a cluster fails, never skips, when the etcd and
// kube-apiserver binaries are missing: the failure says how to build them
// (bash scripts/tools.sh, which CI runs first). StartWithNode, a cluster with
// a node that runs pods, skips instead when the host cannot run one (not
// root, or `scripts/tools.sh node` not run), and fails like Start otherwise.
package localclustertest
