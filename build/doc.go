// Package build holds the container images' Dockerfiles (outpost.Dockerfile,
// the control plane; runner.Dockerfile, the runner with outpost-runner-helm and
// terraform 1.5.7) and the tests that build and run them through
// scripts/docker.sh: non-root users, labels, the runner's tools, the control
// plane's migrate and org create on PostgreSQL, and the runner container
// running a terraform job, a helm chart build and a helm deploy (on a local
// kube-apiserver: the package needs OUTPOST_KUBE_ASSETS, as the charts tests do)
// from a real gateway.
//
// The tests start a Docker engine when none answers (scripts/docker.sh engine:
// root installs and starts Debian's docker.io) and are skipped only when that
// fails. Where no image can be pulled, scripts/docker.sh builds on local base
// images (a debootstrapped Debian and the host's Go toolchain) passed as the
// Dockerfiles' GO_IMAGE and BASE_IMAGE build arguments; elsewhere
// OUTPOST_IMAGE_BASES=public builds on the public ones.
package build
