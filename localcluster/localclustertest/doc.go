// Package localclustertest starts local clusters (package localcluster) for
// tests. A test that needs a cluster fails, never skips, when the etcd and
// kube-apiserver binaries are missing: the failure says how to build them
// (bash scripts/tools.sh, which CI runs first).
package localclustertest
