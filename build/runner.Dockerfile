# The runner image: outpost-runner, outpost-runner-helm next to it, terraform
# v1.5.7 (the last MPL-2.0 release: 1.6 on is BUSL, which this image must not
# redistribute), /bin/sh and CA certificates (local-exec and providers need them).
# Build from the repository's root: docker build -f build/runner.Dockerfile .
ARG GO_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${GO_IMAGE} AS terraform
ARG GOPROXY
ARG GOSUMDB
ARG TERRAFORM_VERSION=1.5.7
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
# Built from source through the module proxy, as scripts/tools.sh does; its licence goes along.
RUN go install -trimpath -ldflags "-s -w" "github.com/hashicorp/terraform@v${TERRAFORM_VERSION}" \
 && mkdir -p /out \
 && mv "$(go env GOPATH)/bin/terraform" /out/terraform \
 && cp "$(go env GOMODCACHE)/github.com/hashicorp/terraform@v${TERRAFORM_VERSION}/LICENSE" /out/terraform.LICENSE

FROM ${GO_IMAGE} AS build
ARG GOPROXY
ARG GOSUMDB
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
WORKDIR /src
# The module download is a layer of its own: it is redone only when go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN go build -trimpath -ldflags "-s -w -X github.com/outpost-dev/outpost/runner.Version=${VERSION}" \
      -o /out/ ./cmd/outpost-runner ./cmd/outpost-runner-helm

FROM ${BASE_IMAGE}
ARG VERSION=dev
ARG LICENSES="Apache-2.0 AND MPL-2.0"
LABEL org.opencontainers.image.title="outpost-runner" \
      org.opencontainers.image.description="Outpost runner: outpost-runner, outpost-runner-helm and terraform 1.5.7" \
      org.opencontainers.image.source="https://github.com/outpost-dev/outpost" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="${LICENSES}"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=terraform /out/terraform /usr/local/bin/terraform
COPY --from=terraform /out/terraform.LICENSE /usr/share/doc/terraform/LICENSE
COPY --from=build /out/outpost-runner /out/outpost-runner-helm /usr/local/bin/
COPY --from=build /src/LICENSE /usr/share/doc/outpost/LICENSE
# A user of its own (the chart's runAsUser when runner.jobUser is ""; by default the chart runs it as root to
# run jobs as other uids), whose home is the work directory the chart mounts.
RUN echo 'outpost:x:65532:65532:outpost runner:/var/lib/outpost-runner:/usr/sbin/nologin' >>/etc/passwd \
 && echo 'outpost:x:65532:' >>/etc/group \
 && mkdir -p /var/lib/outpost-runner \
 && chown 65532:65532 /var/lib/outpost-runner
ENV HOME=/var/lib/outpost-runner
WORKDIR /var/lib/outpost-runner
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/outpost-runner"]
CMD ["run"]
