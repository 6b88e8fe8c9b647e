package engine

import (
	"github.com/outpost-dev/outpost/runner/dockerbuild"

	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/moby/buildkit/session"
	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/api/types/registry"
	"github.com/moby/moby/client"
)

// Build builds opts with the engine DOCKER_HOST names (the local socket by
// default) and returns the image it made.
func Build(ctx context.Context, opts dockerbuild.Options) (dockerbuild.Result, error) {
	cli, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return dockerbuild.Result{}, fmt.Errorf("docker engine: %w", err)
	}
	defer cli.Close()
	ver, err := cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return dockerbuild.Result{}, fmt.Errorf("no Docker engine answers (%s): %w", cli.DaemonHost(), err)
	}
	res := dockerbuild.Result{Builder: "BuildKit in Docker Engine " + ver.Version}
	fmt.Fprintf(opts.Log, "outpost: building with %s (API %s)\n", res.Builder, ver.APIVersion)

	sess, err := session.NewSession(ctx, opts.Tag)
	if err != nil {
		return dockerbuild.Result{}, fmt.Errorf("buildkit session: %w", err)
	}
	sess.Allow(authProvider(opts.Credentials))
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go sess.Run(sctx, func(ctx context.Context, proto string, meta map[string][]string) (net.Conn, error) {
		return cli.DialHijack(ctx, "/session", proto, meta)
	})
	defer sess.Close()

	args := map[string]*string{}
	for k, v := range opts.BuildArgs {
		args[k] = &v
	}
	auths := map[string]registry.AuthConfig{}
	for host, c := range opts.Credentials {
		auths[host] = registry.AuthConfig{Username: c.Username, Password: c.Password, ServerAddress: host}
	}
	resp, err := cli.ImageBuild(ctx, bytes.NewReader(opts.Context), client.ImageBuildOptions{
		Version: build.BuilderBuildKit, SessionID: sess.ID(),
		Dockerfile: opts.Dockerfile, BuildArgs: args, Target: opts.Target, Tags: []string{opts.Tag},
		PullParent: true, Remove: true, ForceRemove: true, AuthConfigs: auths,
	})
	if err != nil {
		return dockerbuild.Result{}, builderError(err)
	}
	defer resp.Body.Close()
	p := newProgress(opts.Log)
	if err := p.read(resp.Body); err != nil {
		return dockerbuild.Result{}, err
	}
	res.Steps, res.Cached = p.steps()
	fmt.Fprintf(opts.Log, "outpost: built %s (%d steps, %d from the layer cache)\n", p.imageID, res.Steps, res.Cached)
	res.Image, err = save(ctx, cli, opts.Tag, filepath.Join(opts.Dir, "image.tar"))
	return res, err
}

// builderError is an error the engine answered the build request with.
func builderError(err error) error {
	var nerr net.Error
	if errors.As(err, &nerr) || errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("docker engine: %w", err)
	}
	return &dockerbuild.Failed{Message: err.Error()}
}
