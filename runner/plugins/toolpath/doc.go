// Package toolpath finds the tools the project builds into .tools/
// (scripts/tools.sh: terraform, etcd and kube-apiserver) in a directory or one
// of its parents, so that the repository's copy is found from any package's
// tests and from any working directory inside the repository.
package toolpath
