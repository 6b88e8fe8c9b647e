#!/usr/bin/env bash
# Makes what the compose stack (docker-compose.yml) needs on a machine that can
# pull no image: a Docker engine, Docker Compose, and local images.
#
# Usage: scripts/compose.sh [tool] [images]   (with none named, both)
#   tool    Docker Compose built from source (scripts/tools.sh compose) and
#           installed as the docker CLI plugin ~/.docker/cli-plugins/docker-compose
#   images  scripts/docker.sh (engine, base images, the outpost and runner
#           images), then the stand-ins (docker's layer cache makes a rebuild quick):
#           $POSTGRES_IMAGE (build/postgres.Dockerfile on the local Debian base)
#           and $DEMO_RUNNER_IMAGE (build/demo-runner.Dockerfile: the runner
#           image plus outpost-registry, outpost-cluster, etcd and kube-apiserver)
# Then run the stack with the local images (variables as below):
#   . scripts/compose-env.sh && docker compose up -d --wait
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=compose-env.sh
. "$root/scripts/compose-env.sh"

log() { echo "compose.sh: $*" >&2; }

tool() {
  bash "$root/scripts/tools.sh" compose
  local bin=$root/.tools/compose/v2.40.3/docker-compose # tools.sh's version
  mkdir -p "$HOME/.docker/cli-plugins"
  ln -sf "$bin" "$HOME/.docker/cli-plugins/docker-compose"
  docker compose version >&2
}


postgres_image() {
  log "building $POSTGRES_IMAGE (Debian's postgresql-15 on outpost-local/debian:bookworm)"
  docker build -q --build-arg BASE_IMAGE=outpost-local/debian:bookworm \
    -f "$root/build/postgres.Dockerfile" -t "$POSTGRES_IMAGE" "$root/build" >/dev/null
}

demo_runner_image() {
  bash "$root/scripts/tools.sh" kube
  local kube=${OUTPOST_KUBE_ASSETS:-$root/.tools/kube/v1.36.3} dir
  dir=$(mktemp -d /tmp/outpost-demo-runner.XXXXXX)
  log "building $DEMO_RUNNER_IMAGE on $RUNNER_IMAGE (kube assets from $kube)"
  (cd "$root" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -o "$dir/" ./cmd/outpost-registry ./cmd/outpost-cluster)
  cp "$kube/etcd" "$kube/kube-apiserver" "$dir/"
  docker build -q --build-arg RUNNER_IMAGE="$RUNNER_IMAGE" \
    -f "$root/build/demo-runner.Dockerfile" -t "$DEMO_RUNNER_IMAGE" "$dir" >/dev/null
  rm -rf "$dir"
}

images() {
  bash "$root/scripts/docker.sh" engine bases images
  postgres_image
  # Rebuilt every time, as the runner image is: it is a layer on it.
  demo_runner_image
}

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(tool images)
for step in "${want[@]}"; do
  case $step in
    tool | images) "$step" ;;
    *) log "unknown step $step (tool or images)"; exit 2 ;;
  esac
done
