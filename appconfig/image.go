package appconfig

import (
	"fmt"
	"regexp"
	"strings"
)

// ContainerImage is a container_image component: an external image that a
// build copies, pinned by its digest, into the vendor's registry, and that
// each install then gets in its own registry.
type ContainerImage struct {
	// Image is the reference as written ("ghcr.io/acme/api:1.4.2",
	// "ghcr.io/acme/api@sha256:…").
	Image string `json:"image"`
	// PlainHTTP: the image's registry talks HTTP (loopback registries in
	// tests and development).
	PlainHTTP bool `json:"plain_http"`
	// Reference is Image, parsed.
	Reference ImageReference `json:"-"`
}

// The outputs of a container_image component, as templates of other
// components see them (.components.<name>.outputs.<output>): where the image
// is in the install's registry, by digest.
const (
	// ImageOutputImage is "<registry>/<repository>@sha256:…".
	ImageOutputImage = "image"
	// ImageOutputRepository is "<registry>/<repository>".
	ImageOutputRepository = "repository"
	// ImageOutputDigest is "sha256:…".
	ImageOutputDigest = "digest"
)

// ImageOutputs are the outputs of every container_image component, sorted.
var ImageOutputs = []string{ImageOutputDigest, ImageOutputImage, ImageOutputRepository}

// ImageOutputValues are the outputs of a container_image component whose
// image is at repository ("registry.acme.internal/shop/api") with digest
// ("sha256:…") in the install's registry, as Data.Components holds them.
func ImageOutputValues(repository, digest string) map[string]Value {
	return map[string]Value{
		ImageOutputImage:      {Value: repository + "@" + digest},
		ImageOutputRepository: {Value: repository},
		ImageOutputDigest:     {Value: digest},
	}
}

// ImageReference is a parsed container image reference:
// <registry>/<repository>[:<tag>][@<digest>], with a tag, a digest or both.
type ImageReference struct {
	// Registry is the host, with its port if any ("ghcr.io",
	// "127.0.0.1:5000").
	Registry string `json:"registry"`
	// Repository is the path within the registry ("acme/api").
	Repository string `json:"repository"`
	Tag        string `json:"tag,omitempty"`
	// Digest is "sha256:<64 hex digits>".
	Digest string `json:"digest,omitempty"`
}

// Name is "<registry>/<repository>".
func (r ImageReference) Name() string { return r.Registry + "/" + r.Repository }

// String is the reference in full.
func (r ImageReference) String() string {
	s := r.Name()
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// The grammar of image references (that of the distribution project,
// requiring an explicit registry host and a tag or digest). imageRefPattern
// is also the pattern of container_image.image in
// schemas/app-config.schema.json; a test keeps them equal.
const (
	hostLabel    = `[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?`
	hostPattern  = `(?:localhost(?::[0-9]+)?|` + hostLabel + `(?:\.` + hostLabel + `)+(?::[0-9]+)?|` + hostLabel + `:[0-9]+|\[[0-9a-fA-F:.]+\](?::[0-9]+)?)`
	pathPattern  = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
	tagPattern   = `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`
	digestPatt   = `sha256:[a-f0-9]{64}`
	repoPattern  = pathPattern + `(?:/` + pathPattern + `)*`
	imageRefPatt = `^` + hostPattern + `/` + repoPattern + `(?::` + tagPattern + `(?:@` + digestPatt + `)?|@` + digestPatt + `)$`
)

var (
	hostRE     = regexp.MustCompile(`^` + hostPattern + `$`)
	pathRE     = regexp.MustCompile(`^` + pathPattern + `$`)
	tagRE      = regexp.MustCompile(`^` + tagPattern + `$`)
	digestRE   = regexp.MustCompile(`^` + digestPatt + `$`)
	imageRefRE = regexp.MustCompile(imageRefPatt)
)

// maxRepositoryLen is the distribution project's limit on a repository's
// name.
const maxRepositoryLen = 255

// ParseImageReference parses "<registry>/<repository>:<tag>",
// "<registry>/<repository>@sha256:<hex>" or both. The registry must be
// written out (a host with a '.' or a port, or localhost): "nginx:1.27" is
// refused with the full form to write instead ("docker.io/library/nginx:1.27"),
// and so is a reference with neither tag nor digest (no implicit "latest").
func ParseImageReference(s string) (ImageReference, error) {
	var r ImageReference
	switch {
	case s == "":
		return r, fmt.Errorf(`must be an image reference, e.g. "ghcr.io/acme/api:1.4.2" or "ghcr.io/acme/api@sha256:<digest>"`)
	case strings.Contains(s, "{{"):
		return r, fmt.Errorf("%q: templates are not supported here: an image is built once, for every install", s)
	case strings.Contains(s, "://"):
		return r, fmt.Errorf("%q: an image reference has no scheme: write <registry>/<repository>:<tag>", s)
	case strings.TrimSpace(s) != s || strings.ContainsAny(s, " \t\r\n"):
		return r, fmt.Errorf("%q: an image reference has no spaces", s)
	}
	rest := s
	if before, digest, ok := strings.Cut(s, "@"); ok {
		if !digestRE.MatchString(digest) {
			return r, fmt.Errorf("%q: the digest %q must be sha256: and 64 lowercase hex digits", s, digest)
		}
		rest, r.Digest = before, digest
	}
	if colon := strings.LastIndex(rest, ":"); colon > strings.LastIndex(rest, "/") {
		tag := rest[colon+1:]
		if !tagRE.MatchString(tag) {
			return r, fmt.Errorf("%q: the tag %q must be 1-128 letters, digits, '_', '.' or '-', not starting with '.' or '-'", s, tag)
		}
		rest, r.Tag = rest[:colon], tag
	}
	host, repo, ok := strings.Cut(rest, "/")
	if !ok || !(strings.ContainsAny(host, ".:[") || host == "localhost") {
		full := "docker.io/" + s
		if !ok {
			full = "docker.io/library/" + s
		}
		return r, fmt.Errorf("%q has no registry host: write the reference in full, e.g. %q for Docker Hub", s, full)
	}
	if !hostRE.MatchString(host) {
		return r, fmt.Errorf("%q: %q is not a registry host (a host name or IP address, with an optional :port)", s, host)
	}
	if repo == "" {
		return r, fmt.Errorf("%q names no repository: write <registry>/<repository>:<tag>", s)
	}
	for _, part := range strings.Split(repo, "/") {
		if !pathRE.MatchString(part) {
			return r, fmt.Errorf("%q: repository %q: each part must be lowercase letters and digits, separated by '.', '_', '__' or '-'", s, repo)
		}
	}
	if len(repo) > maxRepositoryLen {
		return r, fmt.Errorf("%q: the repository is longer than %d characters", s, maxRepositoryLen)
	}
	if r.Tag == "" && r.Digest == "" {
		return r, fmt.Errorf("%q has neither tag nor digest: pin it, e.g. %q (there is no implicit \"latest\")", s, s+":1.0.0")
	}
	r.Registry, r.Repository = host, repo
	return r, nil
}

// containerImage reads the checked keys of a container_image component.
func containerImage(ps *problems, file string, m map[string]any) *ContainerImage {
	img := &ContainerImage{}
	img.PlainHTTP, _ = m["plain_http"].(bool)
	if s, ok := m["image"].(string); ok {
		ref, err := ParseImageReference(s)
		if err != nil {
			ps.add(file, "image", "%v", err)
		} else {
			img.Image, img.Reference = s, ref
		}
	}
	return img
}
