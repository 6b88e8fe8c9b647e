package appconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"sync"
)

// BuildInput is what a build of a component consumes, and a digest of it
// that tells whether two config versions would build the same thing.
type BuildInput struct {
	// Type is the component's type.
	Type string `json:"type"`
	// Source is the directory a build packs (ModuleArchive or ChartArchive):
	// a terraform_module's module, a helm_chart's chart; nil for a
	// container_image.
	Source []byte `json:"source,omitempty"`
	// Image and PlainHTTP are a container_image's image and how to reach
	// its registry.
	Image     string `json:"image,omitempty"`
	PlainHTTP bool   `json:"plain_http,omitempty"`
	// Docker is a docker_build's Dockerfile, build arguments and target;
	// Source is then its packed context.
	Docker *DockerBuild `json:"docker,omitempty"`
	// Images are the images a helm_chart's build copies beside the chart:
	// its images, with relocate_images (their references are in Digest).
	Images []string `json:"images,omitempty"`
	// Digest is "sha256:<hex>" over the type and the content: a directory's uncompressed tar stream
	// in Source (blind to times, owners, modes but the executable bit, and gzip), or an image's
	// reference as written (a tag moved in its registry keeps the digest).
	Digest string `json:"digest"`
}

// BuildInput returns what a build of the component consumes, with its
// digest.
func (c *Config) BuildInput(name string) (BuildInput, error) {
	cmp, ok := c.byName[name]
	if !ok {
		return BuildInput{}, fmt.Errorf("appconfig: no component %q", name)
	}
	in := BuildInput{Type: cmp.Type}
	h := sha256.New()
	io.WriteString(h, cmp.Type+"\n")
	switch {
	case cmp.Terraform != nil, cmp.Helm != nil:
		source := ""
		if cmp.Terraform != nil {
			source = cmp.Terraform.Source
		} else {
			source = cmp.Helm.Source
		}
		archive, err := archiveDir(c.fsys, source, h)
		if err != nil {
			return BuildInput{}, err
		}
		in.Source = archive
		if cmp.Helm != nil && cmp.Helm.RelocateImages && len(cmp.Helm.Images) > 0 {
			in.Images = cmp.Helm.Images
			fmt.Fprintf(h, "\x00images=%q", in.Images) // none: the digest charts had before images were built
		}
	case cmp.Image != nil:
		in.Image, in.PlainHTTP = cmp.Image.Image, cmp.Image.PlainHTTP
		io.WriteString(h, cmp.Image.Image)
	case cmp.Docker != nil:
		archive, err := archiveDir(c.fsys, cmp.Docker.Context, h)
		if err != nil {
			return BuildInput{}, err
		}
		in.Source, in.Docker = archive, cmp.Docker
		// What else makes the image: which Dockerfile, its arguments, the stage.
		fmt.Fprintf(h, "\x00dockerfile=%q target=%q", cmp.Docker.Dockerfile, cmp.Docker.Target)
		for _, k := range sortedKeys(cmp.Docker.BuildArgs) {
			fmt.Fprintf(h, " %q=%q", k, cmp.Docker.BuildArgs[k])
		}
	default:
		return BuildInput{}, fmt.Errorf("appconfig: component %q: a %s has no build", name, cmp.Type)
	}
	in.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return in, nil
}

// buildKeys are the build inputs BuildKey worked out, without their source,
// by type and source directory (by component name for an image).
type buildKeys struct {
	mu   sync.Mutex
	done map[string]BuildInput
}

// BuildKey is BuildInput without the source: the component's type, its
// image and the digest, which is what finding its build takes. A config
// does not change once loaded, so each source directory is packed and
// hashed once per Config (components of a type that share a directory
// share its key); a Config shared between goroutines may be asked
// concurrently.
func (c *Config) BuildKey(name string) (BuildInput, error) {
	memo := name
	if cmp, ok := c.byName[name]; ok {
		// Components of one type that pack the same directory share it.
		switch {
		case cmp.Terraform != nil:
			memo = cmp.Type + "\x00" + cmp.Terraform.Source
		case cmp.Helm != nil:
			memo = cmp.Type + "\x00" + cmp.Helm.Source
			if len(cmp.Helm.Images) > 0 { // its build copies them too
				memo += "\x00" + strings.Join(cmp.Helm.Images, "\x00")
			}
		}
	}
	c.builds.mu.Lock()
	in, ok := c.builds.done[memo]
	c.builds.mu.Unlock()
	if ok {
		return in, nil
	}
	// Packed without the lock: other components' keys need not wait. Two
	// goroutines may pack the same directory at once; both get the same key.
	in, err := c.BuildInput(name)
	if err != nil {
		return BuildInput{}, err
	}
	in.Source = nil
	c.builds.mu.Lock()
	c.builds.done[memo] = in
	c.builds.mu.Unlock()
	return in, nil
}

// SandboxDigest is "sha256:<hex>" over the sandbox's module, as BuildInput's
// digest is over a component's source: it tells whether two config versions
// have the same sandbox module.
func (c *Config) SandboxDigest() (string, error) {
	h := sha256.New()
	io.WriteString(h, "sandbox\n")
	if _, err := archiveDir(c.fsys, c.Sandbox.Source, h); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
