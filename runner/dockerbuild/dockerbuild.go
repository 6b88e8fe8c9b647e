package dockerbuild

import (
	"context"
	"io"

	"github.com/google/go-containerregistry/pkg/v1"
)

// BuildFunc builds one image: engine.Build. It is passed in by the binary
// that runs image builds (outpost-runner-helm), so that the binary running
// every other job does not link the Docker client and BuildKit.
type BuildFunc func(ctx context.Context, opts Options) (Result, error)

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
