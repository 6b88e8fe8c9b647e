# The demo install's runner (the compose stack's DEMO_RUNNER_IMAGE): the runner
# image plus what examples/demo-app's sandbox and cluster start on the runner's
# machine: outpost-registry, outpost-cluster, and etcd + kube-apiserver
# (OUTPOST_KUBE_ASSETS). A demo layer, not a product image.
# scripts/compose.sh builds it from a directory holding those four binaries
# (built from this repository and by scripts/tools.sh kube):
#   docker build -f build/demo-runner.Dockerfile --build-arg RUNNER_IMAGE=… DIR
ARG RUNNER_IMAGE=ghcr.io/outpost-dev/outpost-runner:dev
FROM ${RUNNER_IMAGE}
COPY outpost-registry outpost-cluster /usr/local/bin/
COPY etcd kube-apiserver /opt/outpost-kube/
ENV OUTPOST_KUBE_ASSETS=/opt/outpost-kube
