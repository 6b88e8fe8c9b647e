// Package e2e holds Outpost's end-to-end tests and benchmarks: a control plane
// on an in-process Temporal server and a real PostgreSQL, real runner
// processes (outpost-runner, outpost-runner-helm), a real terraform, OCI
// registries and a local kube-apiserver, driven through the public API as a
// vendor would. It has no code of its own outside its tests.
package e2e
