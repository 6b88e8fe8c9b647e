package protocol

// JobTypeOCI builds artifacts into a registry and syncs them between
// registries.
const JobTypeOCI = "oci"

// JobTypeHelmChart builds a helm chart into a registry: its manifest is an
// OCIManifest whose operation is build_helm_chart. It is a job type of its
// own because packaging a chart takes helm's SDK, which runners keep out of
// the binary that runs the other job types (it would slow every job
// process's start): runners run it in outpost-runner-helm.
const JobTypeHelmChart = "helm_chart"

// JobTypeDockerImage builds a docker_build component's image with a Docker
// engine: its manifest is an OCIManifest whose operation is
// build_docker_image. A job type of its own for the same reason as
// JobTypeHelmChart (the Docker client and BuildKit): runners run it in
// outpost-runner-helm.
const JobTypeDockerImage = "docker_image"

// OCI operations.
const (
	// OCIBuildTerraformModule pushes Source (a module directory) as a
	// terraform-module artifact.
	OCIBuildTerraformModule = "build_terraform_module"
	// OCIBuildHelmChart packages Source (a chart directory) with helm and
	// pushes the chart (in a JobTypeHelmChart job; the others are
	// JobTypeOCI jobs).
	OCIBuildHelmChart = "build_helm_chart"
	// OCIBuildContainerImage copies the external Image into the destination,
	// pinned by its digest.
	OCIBuildContainerImage = "build_container_image"
	// OCIBuildDockerImage builds Source (a build context) with a Docker
	// engine's BuildKit as Docker says, and pushes the image as an OCI
	// image.
	OCIBuildDockerImage = "build_docker_image"
	// OCISync copies Artifact, by digest, into the destination and checks
	// that the destination serves exactly that digest.
	OCISync = "sync"
	// OCISyncPlan is a sync's plan: it reads only the destination, and says
	// whether it still holds Artifact's digest whole (its manifest and all
	// it references) or what a sync would copy again (OCISyncPlanOutputs).
	OCISyncPlan = "sync_plan"
)

// Media types of Outpost's own artifacts.
const (
	// ArtifactTypeTerraformModule is the artifactType of a terraform-module
	// artifact: an OCI image manifest with an empty config, the module's
	// layer and, when its providers were vendored, theirs.
	ArtifactTypeTerraformModule = "application/vnd.outpost.terraform.module.v1"
	// MediaTypeTerraformModuleLayer is its first layer: the module directory
	// as a gzipped tar archive, exactly as the manifest's Source carried it.
	MediaTypeTerraformModuleLayer = "application/vnd.outpost.terraform.module.layer.v1.tar+gzip"
	// MediaTypeTerraformProvidersLayer is a terraform-module artifact's
	// optional second layer: the providers the module requires, resolved by
	// the build runner, as a gzipped tar of a plugin directory ("plugins/",
	// terraform's unpacked layout) and the ".terraform.lock.hcl" carrying
	// their hashes. An artifact without it leaves providers to the install's
	// runner.
	MediaTypeTerraformProvidersLayer = "application/vnd.outpost.terraform.providers.layer.v1.tar+gzip"
	// AnnotationComponent names the component an artifact was built for.
	AnnotationComponent = "dev.outpost.component"
)

// Media types of helm charts in OCI registries (helm's own).
const (
	MediaTypeHelmChartConfig = "application/vnd.cncf.helm.config.v1+json"
	MediaTypeHelmChartLayer  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// OCIManifest is a fully rendered oci job. It carries registry credentials:
// it is stored with the job and never put in Temporal history.
//
// Which fields an operation takes:
//
//	build_terraform_module  component, source, destination
//	build_helm_chart        component, source, destination (tag: defaults to the chart's version), images
//	build_container_image   component, image, destination
//	build_docker_image      component, source, docker, destination
//	sync                    artifact, destination
//	sync_plan               artifact, destination (the source is not contacted)
//
// Every operation's outputs but sync_plan's are the resulting Artifact in the
// destination.
type OCIManifest struct {
	Operation string `json:"operation"`
	// Component names the component being built; builds record it in the
	// artifact's annotations.
	Component string `json:"component,omitempty"`
	// Source is the component's directory as a gzipped tar archive (as
	// TerraformManifest.Module): a terraform module or a helm chart.
	Source []byte `json:"source,omitempty"`
	// Image is the external image of build_container_image.
	Image *OCIImageSource `json:"image,omitempty"`
	// Docker is how build_docker_image builds Source.
	Docker *OCIDockerBuild `json:"docker,omitempty"`
	// Artifact is what sync copies.
	Artifact *ArtifactRef `json:"artifact,omitempty"`
	// Destination is where the artifact goes.
	Destination OCIDestination `json:"destination"`
	// Images are the images a build_helm_chart copies, by digest, from
	// their registries into the destination's registry beside the chart
	// (<repository>/images/<source host>/<source repository>): the
	// component's images, with relocate_images. The outputs list them.
	Images []string `json:"images,omitempty"`
	// Platforms are the "<os>_<arch>" platforms a terraform module's build
	// vendors providers for besides the build runner's own: those the app's
	// install runners reported (RegisterRequest.Platform), sorted.
	Platforms []string `json:"platforms,omitempty"`
}

// OCIImageSource is an external container image.
type OCIImageSource struct {
	// Reference is the image, by tag or digest:
	// "docker.io/library/nginx:1.27", "ghcr.io/acme/api@sha256:…".
	Reference string `json:"reference"`
	// Username and Password, when the image is not public.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// PlainHTTP talks HTTP to the image's registry (loopback registries).
	PlainHTTP bool `json:"plain_http,omitempty"`
}

// OCIDestination is a repository of a registry that a job pushes to.
type OCIDestination struct {
	Registry   RegistryAccess `json:"registry"`
	Repository string         `json:"repository"`
	// Tag, when set, is pointed at the artifact once the registry serves
	// it with the expected digest.
	Tag string `json:"tag,omitempty"`
}

// OCISyncPlanOutputs are a sync_plan job's outputs: whether the destination
// still holds the artifact whole.
type OCISyncPlanOutputs struct {
	// HasChanges says a sync would copy something: the destination lacks
	// part of the artifact.
	HasChanges bool `json:"has_changes"`
	// Missing are the parts the destination lacks: "manifest sha256:…" (the
	// artifact's own, or an index's platform manifest), "blob sha256:…".
	Missing []string `json:"missing"`
	// Plan says it in words, as a plan's text.
	Plan string `json:"plan"`
}

// OCIDockerBuild is how a build context is built into an image.
type OCIDockerBuild struct {
	// Dockerfile is the Dockerfile's path inside the context.
	Dockerfile string `json:"dockerfile"`
	// BuildArgs are the values of the Dockerfile's ARGs.
	BuildArgs map[string]string `json:"build_args,omitempty"`
	// Target is the stage to build; the last one when empty.
	Target string `json:"target,omitempty"`
	// SourceDigest is the build's source digest, recorded in the image's
	// provenance.
	SourceDigest string `json:"source_digest"`
	// Registries are the credentials base images are pulled with, by
	// registry address (the destination's are used for its registry).
	Registries []RegistryAccess `json:"registries,omitempty"`
}

// Annotations of a built image's manifest: its provenance.
const (
	// AnnotationSourceDigest is the build's source digest.
	AnnotationSourceDigest = "dev.outpost.source-digest"
	// AnnotationBuildArgs are the build arguments, as a JSON object.
	AnnotationBuildArgs = "dev.outpost.build-args"
	// AnnotationBuilder names the builder ("BuildKit in Docker Engine 20.10.24").
	AnnotationBuilder = "dev.outpost.builder"
)
