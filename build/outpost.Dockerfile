# The control plane image: `outpost` (api, worker, migrate, org create).
# Build from the repository's root: docker build -f build/outpost.Dockerfile .
# (scripts/docker.sh builds it with the base images this machine can use).
ARG GO_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot

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
RUN go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/outpost ./cmd/outpost \
 && mkdir -p /out/data

FROM ${BASE_IMAGE}
ARG VERSION=dev
ARG LICENSES=Apache-2.0
LABEL org.opencontainers.image.title="outpost" \
      org.opencontainers.image.description="Outpost control plane: outpost api, worker, migrate, org create" \
      org.opencontainers.image.source="https://github.com/outpost-dev/outpost" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="${LICENSES}"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/outpost /usr/local/bin/outpost
COPY --from=build /src/LICENSE /usr/share/doc/outpost/LICENSE
COPY --from=build --chown=65532:65532 /out/data /var/lib/outpost
# A container listens on every interface; state (the vendor registry's blobs) lives in /var/lib/outpost.
ENV OUTPOST_DATA_DIR=/var/lib/outpost \
    OUTPOST_API_LISTEN=:8080 \
    OUTPOST_GATEWAY_LISTEN=:8081 \
    OUTPOST_REGISTRY_LISTEN=:5000
EXPOSE 8080 8081 5000
WORKDIR /var/lib/outpost
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/outpost"]
CMD ["--help"]
