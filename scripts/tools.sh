#!/usr/bin/env bash
# Makes sure the tools the runner and the tests use are there: a terraform
# binary, and the etcd + kube-apiserver pair the helm tests and the local
# cluster (package localcluster, cmd/outpost-cluster) start.
#
# terraform. The runner (and the tests) look for it in this order:
#   1. --terraform / OUTPOST_TERRAFORM
#   2. "terraform" on PATH
#   3. .tools/terraform/1.5.7/terraform in the working directory or one of its
#      parents (so the repository's copy is found from any package's tests)
# When none of them has one, this script builds terraform v1.5.7 from source
# through the Go module proxy into .tools/terraform/1.5.7/ (a few minutes, once:
# the directory is named by version, so it is the cache). Nothing is downloaded
# when a terraform is found.
#
# etcd and kube-apiserver (Kubernetes v1.36.3, etcd v3.6.8). localcluster looks
# for a directory holding both binaries in this order:
#   1. its BinaryAssetsDir option / OUTPOST_KUBE_ASSETS
#   2. .tools/kube/v1.36.3/ in the working directory or one of its parents
# When OUTPOST_KUBE_ASSETS is unset and .tools/kube/v1.36.3/ lacks one of them,
# this script builds both from source through the Go module proxy, from the
# tools module tools/kube/go.mod (a module of its own, so the replace lines
# Kubernetes needs stay out of the main go.mod). That takes about 18 minutes (empty Go caches) on
# two cores, once: the directory is named by version, so it is the cache.
# No release binary is downloaded.
#
# Docker Compose (v2.40.3), for the compose stack's tests (scripts/compose.sh):
# built from source through the Go module proxy, from the tools module
# tools/compose/go.mod, into .tools/compose/v2.40.3/docker-compose (about 10
# minutes on two cores with empty Go caches, once; named by version, so cached).
# Only when named: `scripts/tools.sh compose`.
#
# tmux, for the CLI's real-terminal test (e2e/cli_tui_test.go): Debian's
# package, installed with apt-get when there is no tmux on PATH (needs root).
#
# chromium, for the dashboard's browser tests (e2e/dashboard_test.go, driven
# by chromedp): Debian's package, installed with apt-get when there is no
# chromium on PATH (needs root).
#
# node, for localcluster's optional node (Options.Node): kubelet,
# kube-controller-manager and kube-scheduler of the same Kubernetes, built into
# .tools/kube/v1.36.3/ next to etcd and kube-apiserver (only the missing ones;
# a few more minutes once the kube-apiserver build has filled the Go caches),
# and Debian's containerd, runc and containernetworking-plugins, installed
# with apt-get when missing (needs root, as running the node does). Only when
# named (kube does not imply it), or with no tool named.
#
# Usage: scripts/tools.sh [--background LOG] [terraform] [kube] [node] [compose] [tmux] [chromium]
# With no tool named, terraform, kube, node, tmux and chromium. With --background LOG, a missing tool is built in
# a background process that writes to LOG (and records its pid in LOG.pid,
# so a second start while it runs only says so); LOG's last line ends in
# "done" or "failed". `go tool task dev` builds kube so, while the control
# plane and the terraform part of the demo come up.
set -euo pipefail

background=""
if [ "${1:-}" = "--background" ]; then
  background=$2
  shift 2
fi
want=("$@")
[ ${#want[@]} -gt 0 ] || want=(terraform kube node tmux chromium)

root=$(cd "$(dirname "$0")/.." && pwd)

# Each tool is built into a temporary directory next to its cache directory
# (tmp, set by newtmp) and renamed into place, so a half-built binary is never
# found; the temporary directories are removed on exit.
tmps=()
trap 'rm -rf "${tmps[@]}"' EXIT
newtmp() {
  tmp="$1.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  tmps+=("$tmp")
}

terraform_tool() {
  local version=1.5.7
  local dir="$root/.tools/terraform/$version"

  if [ -n "${OUTPOST_TERRAFORM:-}" ]; then
    if [ ! -x "$OUTPOST_TERRAFORM" ] || [ -d "$OUTPOST_TERRAFORM" ]; then
      echo "tools: OUTPOST_TERRAFORM=$OUTPOST_TERRAFORM is not an executable file" >&2
      exit 1
    fi
    return
  fi
  if command -v terraform >/dev/null 2>&1; then
    return
  fi
  if [ -x "$dir/terraform" ]; then
    return
  fi

  echo "tools: no terraform found: building terraform v$version from the Go module proxy into $dir (a few minutes, once)" >&2
  local start
  start=$(date +%s)
  newtmp "$dir"
  # -mod=mod (which this repository's GOFLAGS may hold) is refused by
  # "go install pkg@version"; a static binary needs no C toolchain.
  GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOBIN="$tmp" go install "github.com/hashicorp/terraform@v$version"
  mkdir -p "$dir"
  mv -f "$tmp/terraform" "$dir/terraform"
  echo "tools: terraform v$version built in $(( $(date +%s) - start ))s: $dir/terraform" >&2
}

kube_tools() {
  # Keep in step with tools/kube/go.mod and localcluster.KubernetesVersion.
  local version=v1.36.3 major=1 minor=36
  local dir="$root/.tools/kube/$version"

  if [ -n "${OUTPOST_KUBE_ASSETS:-}" ]; then
    local bin
    for bin in etcd kube-apiserver; do
      if [ ! -x "$OUTPOST_KUBE_ASSETS/$bin" ] || [ -d "$OUTPOST_KUBE_ASSETS/$bin" ]; then
        echo "tools: OUTPOST_KUBE_ASSETS=$OUTPOST_KUBE_ASSETS has no executable $bin" >&2
        exit 1
      fi
    done
    return
  fi
  if [ -x "$dir/etcd" ] && [ -x "$dir/kube-apiserver" ]; then
    return
  fi

  echo "tools: no etcd/kube-apiserver found: building Kubernetes $version's kube-apiserver and etcd from the Go module proxy into $dir (about 18 minutes on 2 cores with empty Go caches, once)" >&2
  local start
  start=$(date +%s)
  newtmp "$dir"
  # The versions come from tools/kube/go.mod (GOWORK=off: never a workspace's).
  # helm checks charts' kubeVersion against the server's version, which a
  # plain "go build" leaves at v0.0.0: stamp it as Kubernetes' release does.
  (
    cd "$root/tools/kube"
    export GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0
    go build -o "$tmp/etcd" go.etcd.io/etcd/server/v3
    go build -o "$tmp/kube-apiserver" \
      -ldflags "-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor" \
      k8s.io/kubernetes/cmd/kube-apiserver
  )
  mkdir -p "$dir"
  mv -f "$tmp/etcd" "$dir/etcd"
  mv -f "$tmp/kube-apiserver" "$dir/kube-apiserver"
  echo "tools: etcd and kube-apiserver $version built in $(( $(date +%s) - start ))s: $dir" >&2
}

# node_tools: the node's binaries (after kube_tools) and Debian packages.
node_tools() {
  kube_tools
  local version=v1.36.3 major=1 minor=36
  local dir="${OUTPOST_KUBE_ASSETS:-$root/.tools/kube/$version}" bin missing=()
  # With OUTPOST_KUBE_ASSETS set, as for kube, nothing is built: it must hold them.
  for bin in kubelet kube-controller-manager kube-scheduler; do
    [ -x "$dir/$bin" ] || missing+=("$bin")
  done
  if [ ${#missing[@]} -gt 0 ] && [ -n "${OUTPOST_KUBE_ASSETS:-}" ]; then
    echo "tools: OUTPOST_KUBE_ASSETS=$OUTPOST_KUBE_ASSETS has no ${missing[*]} (unset it to build them into .tools/kube/$version/)" >&2
    exit 1
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "tools: building Kubernetes $version's ${missing[*]} into $dir" >&2
    local start=$SECONDS pkgs=()
    newtmp "$dir"
    for bin in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$bin"); done
    (cd "$root/tools/kube" && GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 go build -o "$tmp/" \
      -ldflags "-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor" \
      "${pkgs[@]}")
    mkdir -p "$dir"
    for bin in "${missing[@]}"; do mv -f "$tmp/$bin" "$dir/$bin"; done
    echo "tools: ${missing[*]} built in $(( SECONDS - start ))s: $dir" >&2
  fi
  node_packages_missing || return 0
  if [ "$(id -u)" != 0 ]; then
    echo "tools: containerd, runc, containernetworking-plugins or gcc are missing and installing them needs root: run scripts/tools.sh node as root (or apt-get install $node_packages)" >&2
    exit 1
  fi
  echo "tools: installing Debian's $node_packages" >&2
  apt-get update -q >&2
  # shellcheck disable=SC2086 # a list of names
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $node_packages >&2
}

# gcc and libc6-dev compile the node's pause program statically.
node_packages="containerd runc containernetworking-plugins gcc libc6-dev"
node_packages_missing() {
  local cmd
  for cmd in containerd runc ctr gcc; do command -v $cmd >/dev/null 2>&1 || return 0; done
  [ ! -x /usr/lib/cni/bridge ] || [ ! -e /usr/include/signal.h ]
}

node_missing() {
  local dir="${OUTPOST_KUBE_ASSETS:-$root/.tools/kube/v1.36.3}" bin
  kube_missing && return 0
  node_packages_missing && return 0
  for bin in kubelet kube-controller-manager kube-scheduler; do [ -x "$dir/$bin" ] || return 0; done
  return 1
}

node_tool() { node_tools; }

compose_tool() {
  # Keep in step with tools/compose/go.mod and scripts/compose.sh.
  local version=v2.40.3
  local dir="$root/.tools/compose/$version"
  [ -x "$dir/docker-compose" ] && return
  echo "tools: building Docker Compose $version from the Go module proxy into $dir (about 10 minutes on 2 cores with empty Go caches, once)" >&2
  local start=$SECONDS
  newtmp "$dir"
  (cd "$root/tools/compose" && GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 go build -trimpath \
    -ldflags "-w -X github.com/docker/compose/v2/internal.Version=$version" -o "$tmp/docker-compose" github.com/docker/compose/v2/cmd)
  mkdir -p "$dir" && mv -f "$tmp/docker-compose" "$dir/docker-compose"
  echo "tools: Docker Compose $version built in $(( SECONDS - start ))s: $dir/docker-compose" >&2
}

tmux_tool() {
  command -v tmux >/dev/null 2>&1 && return
  echo "tools: no tmux: installing Debian's tmux" >&2
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q tmux >&2
}

tmux_missing() { ! command -v tmux >/dev/null 2>&1; }

chromium_tool() {
  command -v chromium >/dev/null 2>&1 && return
  echo "tools: no chromium: installing Debian's chromium" >&2
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >&2
}

chromium_missing() { ! command -v chromium >/dev/null 2>&1; }

compose_missing() { [ ! -x "$root/.tools/compose/v2.40.3/docker-compose" ]; }

# kube_missing and terraform_missing say whether a build is needed.
kube_missing() {
  local dir="$root/.tools/kube/v1.36.3"
  [ -z "${OUTPOST_KUBE_ASSETS:-}" ] && ! { [ -x "$dir/etcd" ] && [ -x "$dir/kube-apiserver" ]; }
}
terraform_missing() {
  [ -z "${OUTPOST_TERRAFORM:-}" ] && ! command -v terraform >/dev/null 2>&1 && [ ! -x "$root/.tools/terraform/1.5.7/terraform" ]
}

# in_background runs tool $1 in a background process logging to $background.
in_background() {
  local tool=$1
  if ! "${tool}_missing"; then
    "${tool}_tool"
    return
  fi
  mkdir -p "$(dirname "$background")"
  if [ -s "$background.pid" ] && kill -0 "$(cat "$background.pid")" 2>/dev/null; then
    echo "tools: $tool is being built already (see $background)" >&2
    return
  fi
  nohup bash -c '
    echo $$ >"$2.pid"
    if bash "$1" "$3"; then echo "tools: $3 done"; else echo "tools: $3 failed (exit $?)"; fi
    rm -f "$2.pid"' bash "$root/scripts/tools.sh" "$background" "$tool" >"$background" 2>&1 </dev/null &
  echo "tools: building $tool in the background (see $background)" >&2
}

kube_tool() { kube_tools; }

for tool in "${want[@]}"; do
  case $tool in
    terraform | kube | node | compose | tmux | chromium) ;;
    *) echo "tools: unknown tool $tool (want terraform, kube, node, compose, tmux or chromium)" >&2; exit 2 ;;
  esac
  if [ -n "$background" ]; then
    in_background "$tool"
  else
    "${tool}_tool"
  fi
done
