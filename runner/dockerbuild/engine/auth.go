package engine

import (
	"github.com/outpost-dev/outpost/runner/dockerbuild"

	"context"

	"github.com/docker/cli/cli/config/types"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/session/auth/authprovider"
)

// authProvider answers the builder's requests for registry credentials
// from creds alone: no docker config file or credential helper is read.
func authProvider(creds map[string]dockerbuild.Credential) session.Attachable {
	return authprovider.NewDockerAuthProvider(authprovider.DockerAuthProviderConfig{
		AuthConfigProvider: func(_ context.Context, host string, _ []string, _ authprovider.ExpireCachedAuthCheck) (types.AuthConfig, error) {
			c, ok := creds[host]
			if !ok {
				return types.AuthConfig{}, nil // anonymous
			}
			return types.AuthConfig{Username: c.Username, Password: c.Password, ServerAddress: host}, nil
		},
	})
}
