package protocol

// RegistryAccess is how a job reaches an OCI registry: its address and a
// credential. The credential is secret: manifests carrying it are stored with
// the job and never put in Temporal history, logs or API answers.
type RegistryAccess struct {
	// Address is the registry's host[:port], without scheme.
	Address  string `json:"address"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// PlainHTTP talks HTTP instead of HTTPS (loopback registries).
	PlainHTTP bool `json:"plain_http,omitempty"`
}

// ArtifactRef names one artifact, by digest, in a repository of a registry.
type ArtifactRef struct {
	Registry   RegistryAccess `json:"registry"`
	Repository string         `json:"repository"`
	// Digest is "sha256:…": artifacts are always addressed by digest.
	Digest string `json:"digest"`
}

// Artifact describes a stored artifact: what a build produced or a sync
// copied.
type Artifact struct {
	Repository string `json:"repository"`
	Digest     string `json:"digest"`
	MediaType  string `json:"media_type"`
	// ArtifactType is the manifest's artifactType (or config media type).
	ArtifactType string `json:"artifact_type,omitempty"`
	// Size is the total size in bytes: manifest, config and layers.
	Size int64 `json:"size"`
	// Provenance is how a built image was made (docker_image builds): the
	// provenance annotations of its manifest, by name (AnnotationSourceDigest, …).
	Provenance map[string]string `json:"provenance,omitempty"`
	// Images are the images a chart's build copied beside it (the
	// component's images, with relocate_images), in the listed order.
	Images []ArtifactImage `json:"images,omitempty"`
}

// ArtifactImage is an image a chart's build copied, by digest, from its
// source into the chart's registry, where a bundle export finds it.
type ArtifactImage struct {
	// Reference is the image as the component lists it
	// ("docker.io/library/nginx:1.27").
	Reference string `json:"reference"`
	// Repository is the copy's repository in the chart's registry
	// ("<chart repository>/images/docker.io/library/nginx").
	Repository string `json:"repository"`
	Digest     string `json:"digest"`
	// Size is the total size in bytes: manifests, configs and layers.
	Size int64 `json:"size"`
}
