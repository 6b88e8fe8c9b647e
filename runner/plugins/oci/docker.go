package oci

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/dockerbuild"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// engineTagPart: what of a repository may name the engine's local image.
var engineTagPart = regexp.MustCompile(`[^a-z0-9._-]+`)

// buildDockerImage builds the context with the Docker engine's BuildKit,
// then pushes the image as an OCI image, by digest, with its provenance in
// the manifest's annotations.
func (p *plugin) buildDockerImage(ctx context.Context, log io.Writer, dir string, dst *ociclient.Target) (protocol.Artifact, error) {
	m := &p.m
	logf(log, "build image of component %q (context %d bytes, %s, source %s) into %s",
		m.Component, len(m.Source), m.Docker.Dockerfile, m.Docker.SourceDigest, dst.Name)
	creds := map[string]dockerbuild.Credential{}
	for _, r := range append(m.Docker.Registries, dst.Dest.Registry) {
		if r.Username != "" || r.Password != "" {
			creds[r.Address] = dockerbuild.Credential{Username: r.Username, Password: r.Password}
		}
	}
	// One local name per repository: the engine keeps the last build, and
	// the next one of the component finds its layers in the cache.
	local := "outpost-build/" + strings.Trim(engineTagPart.ReplaceAllString(strings.ToLower(m.Destination.Repository), "-"), "-.") + ":latest"
	res, err := p.buildImage(ctx, dockerbuild.Options{
		Context: m.Source, Dockerfile: m.Docker.Dockerfile, BuildArgs: m.Docker.BuildArgs, Target: m.Docker.Target,
		Tag: local, Credentials: creds, Dir: dir, Log: log,
	})
	if err != nil {
		return protocol.Artifact{}, err
	}
	args, err := json.Marshal(m.Docker.BuildArgs)
	if err != nil {
		return protocol.Artifact{}, err
	}
	provenance := map[string]string{
		protocol.AnnotationSourceDigest: m.Docker.SourceDigest,
		protocol.AnnotationBuildArgs:    string(args),
		protocol.AnnotationBuilder:      res.Builder,
	}
	annotations := maps.Clone(provenance)
	annotations[protocol.AnnotationComponent] = m.Component
	img := mutate.Annotations(res.Image, annotations).(v1.Image)
	digest, err := img.Digest()
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("the built image: %w", err)
	}
	var opts []name.Option
	if dst.Dest.Registry.PlainHTTP {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.NewDigest(dst.Name+"@"+digest.String(), opts...)
	if err != nil {
		return protocol.Artifact{}, fmt.Errorf("destination: %w", err)
	}
	logf(log, "push %s", ref)
	access := dst.Dest.Registry
	if err := remote.Write(ref, img, remote.WithContext(ctx),
		remote.WithAuth(&authn.Basic{Username: access.Username, Password: access.Password})); err != nil {
		return protocol.Artifact{}, fmt.Errorf("pushing the image to %s: %w", dst.Name, err)
	}
	art, err := dst.Finish(ctx, digest.String(), dst.Dest.Tag)
	art.Provenance = provenance
	return art, err
}
