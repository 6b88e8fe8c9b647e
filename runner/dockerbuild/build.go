package dockerbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/v1"
	"github.com/moby/buildkit/session"
	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/api/types/registry"
	"github.com/moby/moby/client"
)

// Options are one build.
type Options struct {
	// Context is the build context, a (gzipped) tar archive.
	Context []byte
	// Dockerfile is its path inside the context.
	Dockerfile string
	BuildArgs  map[string]string
	// Target is the stage to build; the last one when empty.
	Target string
	// Tag is the engine's local name for the result ("outpost-build/x:y");
	// the engine keeps it, and with it the layer cache of the next build.
	Tag string
	// Credentials by registry host, for pulling base images.
	Credentials map[string]Credential
	// Dir is a scratch directory for the saved image.
	Dir string
	// Log receives the build's progress, one line at a time.
	Log io.Writer
}

// Credential is a registry's basic-auth user.
type Credential struct{ Username, Password string }

// Result is a built image.
type Result struct {
	Image v1.Image
	// Builder names the builder and the engine ("BuildKit in Docker Engine 20.10.24").
	Builder string
	// Steps and Cached count the build's steps, and those the layer cache
	// served.
	Steps, Cached int
}

// Failed is a build the builder refused or that failed: Message is the
// builder's own.
type Failed struct{ Message string }

func (e *Failed) Error() string { return "the build failed: " + e.Message }

// Build builds opts with the engine DOCKER_HOST names (the local socket by
// default) and returns the image it made.
func Build(ctx context.Context, opts Options) (Result, error) {
	cli, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return Result{}, fmt.Errorf("docker engine: %w", err)
	}
	defer cli.Close()
	ver, err := cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return Result{}, fmt.Errorf("no Docker engine answers (%s): %w", cli.DaemonHost(), err)
	}
	res := Result{Builder: "BuildKit in Docker Engine " + ver.Version}
	fmt.Fprintf(opts.Log, "outpost: building with %s (API %s)\n", res.Builder, ver.APIVersion)

	sess, err := session.NewSession(ctx, opts.Tag)
	if err != nil {
		return Result{}, fmt.Errorf("buildkit session: %w", err)
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
		return Result{}, builderError(err)
	}
	defer resp.Body.Close()
	p := newProgress(opts.Log)
	if err := p.read(resp.Body); err != nil {
		return Result{}, err
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
	return &Failed{Message: err.Error()}
}
