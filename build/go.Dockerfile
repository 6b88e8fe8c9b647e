# A stand-in for the golang image where none can be pulled: the local Debian
# base, the host's Go toolchain (the build context's go/) and the host's CA
# certificates (ca-certificates.crt), so the module proxy is reached as the host
# reaches it. scripts/docker.sh makes it; the images' Dockerfiles do not need it.
ARG BASE_IMAGE=outpost-local/debian:bookworm
FROM ${BASE_IMAGE}
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY go /usr/local/go
ENV GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOTOOLCHAIN=local
WORKDIR /go
