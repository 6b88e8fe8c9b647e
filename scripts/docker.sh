#!/usr/bin/env bash
# Builds the container images (build/outpost.Dockerfile, build/runner.Dockerfile)
# as $OUTPOST_IMAGE_REPO/outpost:$OUTPOST_VERSION and $OUTPOST_IMAGE_REPO/outpost-runner:$OUTPOST_VERSION
# (defaults: ghcr.io/outpost-dev, and the runner chart's appVersion, so the runner
# image is the one the chart installs by default).
#
# Usage: scripts/docker.sh [engine] [bases] [images]   (with none named, all three)
#   engine  make sure a Docker engine answers: when none does, install Debian's
#           docker.io if dockerd is missing, and start dockerd in the background
#           (data in $OUTPOST_DOCKER_ROOT, default /var/lib/docker; log in
#           $OUTPOST_DOCKER_LOG, default /var/log/outpost-dockerd.log). Needs root.
#   bases   make the local base images the builds use instead of the public ones,
#           which cannot be pulled here, when they are missing (cached by name):
#           outpost-local/debian:bookworm (debootstrap --variant=minbase, about a
#           minute or two) and outpost-local/golang:<host go version> (that image
#           plus the host's Go toolchain and CA certificates).
#   images  build both images.
# OUTPOST_IMAGE_BASES=public builds on the Dockerfiles' default base images
# (golang, distroless, debian-slim) instead, and makes no local ones.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
repo=${OUTPOST_IMAGE_REPO:-ghcr.io/outpost-dev}
version=${OUTPOST_VERSION:-$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$root/charts/outpost-runner/Chart.yaml")}
debian_image=outpost-local/debian:bookworm
go_image=outpost-local/golang:$(go env GOVERSION | sed 's/^go//')

log() { echo "docker.sh: $*" >&2; }

engine() {
  if docker info >/dev/null 2>&1; then
    return
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    log "no dockerd: installing Debian's docker.io"
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io >&2
  fi
  local data=${OUTPOST_DOCKER_ROOT:-/var/lib/docker} out=${OUTPOST_DOCKER_LOG:-/var/log/outpost-dockerd.log}
  log "starting dockerd (data $data, log $out)"
  mkdir -p "$data" "$(dirname "$out")"
  nohup dockerd --data-root "$data" >>"$out" 2>&1 &
  local i
  for i in $(seq 60); do
    if docker info >/dev/null 2>&1; then
      return
    fi
    sleep 1
  done
  log "dockerd did not answer within 60s; its log ($out) ends:"
  tail -n 20 "$out" >&2
  exit 1
}

has_image() { docker image inspect "$1" >/dev/null 2>&1; }

debian_base() {
  has_image "$debian_image" && return
  command -v debootstrap >/dev/null 2>&1 || {
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2
  }
  local dir
  dir=$(mktemp -d /tmp/outpost-debootstrap.XXXXXX)
  log "making $debian_image with debootstrap in $dir"
  debootstrap --variant=minbase bookworm "$dir" http://deb.debian.org/debian >&2
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
  tar --numeric-owner -C "$dir" -c . | docker import - "$debian_image" >/dev/null
  rm -rf "$dir"
}

go_base() {
  has_image "$go_image" && return
  local dir
  dir=$(mktemp -d /tmp/outpost-goimage.XXXXXX)
  log "making $go_image from $(go env GOROOT)"
  # Hard links when GOROOT is on the same file system, else a copy.
  cp -al "$(go env GOROOT)" "$dir/go" 2>/dev/null || cp -a "$(go env GOROOT)" "$dir/go"
  cp /etc/ssl/certs/ca-certificates.crt "$dir/"
  docker build -q -f "$root/build/go.Dockerfile" --build-arg BASE_IMAGE="$debian_image" -t "$go_image" "$dir" >/dev/null
  rm -rf "$dir"
}

bases() {
  [ "${OUTPOST_IMAGE_BASES:-local}" = public ] && return
  debian_base
  go_base
}

# build NAME DOCKERFILE: one image, on the local bases unless OUTPOST_IMAGE_BASES=public.
build() {
  local args=(--build-arg VERSION="$version" --build-arg GOPROXY="$(go env GOPROXY)" --build-arg GOSUMDB="$(go env GOSUMDB)")
  if [ "${OUTPOST_IMAGE_BASES:-local}" != public ]; then
    args+=(--build-arg GO_IMAGE="$go_image" --build-arg BASE_IMAGE="$debian_image")
  fi
  local start
  start=$(date +%s)
  log "building $repo/$1:$version"
  docker build "${args[@]}" -f "$root/build/$2" -t "$repo/$1:$version" "$root" >&2
  log "$repo/$1:$version built in $(( $(date +%s) - start ))s"
}

images() {
  build outpost outpost.Dockerfile
  build outpost-runner runner.Dockerfile
}

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(engine bases images)
for step in "${want[@]}"; do
  case $step in
    engine | bases | images) "$step" ;;
    *) log "unknown step $step (engine, bases or images)"; exit 2 ;;
  esac
done
