package ociclient

import (
	"net"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/outpost-dev/outpost/protocol"
)

// RelocatedRepository is where an image relocated under prefix goes:
// <prefix>/<source host>/<source repository>, so that a chart's build
// (beside the chart in the vendor registry), an offline deploy's load and
// a chart's relocation (in the install's registry) agree on it.
func RelocatedRepository(prefix string, ref name.Reference) string {
	return prefix + "/" + hostPath(ref.Context().RegistryStr()) + "/" + ref.Context().RepositoryStr()
}

// SourceAccess is how an image's own registry is reached: anonymously,
// over plain HTTP when it is on this machine, as docker and containerd
// speak to such registries.
func SourceAccess(ref name.Reference) protocol.RegistryAccess {
	host := ref.Context().RegistryStr()
	return protocol.RegistryAccess{Address: host, PlainHTTP: isLoopback(host)}
}

// hostPath is a registry host as a repository path component: Docker Hub
// as "docker.io", a port after '-'.
func hostPath(host string) string {
	if host == name.DefaultRegistry {
		return "docker.io"
	}
	return strings.ToLower(strings.ReplaceAll(host, ":", "-"))
}

// isLoopback says a registry is on this machine.
func isLoopback(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}
