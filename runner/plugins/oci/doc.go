// Package oci is the plugin of the "oci" job type: it builds a component's
// artifact into a registry (on the org's build runner) and syncs artifacts
// from the vendor's registry into an install's own registry (on the
// install's runner), so that an install deploys only from its own registry.
// Chart builds are jobs of type "helm_chart", run by the same plugin made
// with ChartBuilder in outpost-runner-helm, which passes it helm's
// chartutil.Save (so that this package, linked into outpost-runner, does
// not link chartutil's costly package initialisation).
//
// A job (protocol.OCIManifest) is one operation; each ends with the artifact
// in the destination repository, addressed by digest, and its outputs are
// that protocol.Artifact:
//
//   - build_terraform_module: the module archive becomes, byte for byte, the
//     first layer of an OCI artifact (artifactType
//     application/vnd.outpost.terraform.module.v1) pushed with oras-go. Its
//     created annotation is fixed, so the same module gives the same digest
//     and an unchanged component is recognised. When the runner has
//     terraform (OUTPOST_TERRAFORM) and the module requires providers, they
//     are resolved with the runner's CLI configuration and packed, with
//     their lock file, as a second layer (providers.go, package
//     terraform/providers).
//   - build_helm_chart: helm's SDK loads the chart directory (honouring
//     .helmignore), packages it (with fixed file times, so an unchanged chart
//     keeps its digest) and helm's registry client pushes it, tagged with the
//     chart's version unless the destination names a tag (helm's client tags
//     as it pushes, so for charts the tag is set before the check below).
//     Helm's credentials file is one in the job's directory, so the job
//     never reads or writes a user's helm login.
//   - build_container_image: an external image (by tag or digest, optionally
//     with a credential) is copied, whole (every platform of an index), into
//     the destination and pinned by its digest: the artifact's digest is the
//     source's.
//   - sync: the artifact named by digest is copied from its registry unless
//     the destination already has it (then the source is not contacted).
//
// One operation changes nothing and outputs a protocol.OCISyncPlanOutputs:
//
//   - sync_plan: a sync's plan, for drift checks of container images. It
//     reads only the destination and lists what it lacks of the artifact
//     (its manifest, an index's manifests, a config or layer blob): what a
//     sync would copy again.
//
// Copies use oras-go's CopyGraph (in BenchmarkSync 1.2–1.7× as fast as
// crane.Copy between two local registries): manifests first checked against
// their digests, then blobs and child manifests ociclient.Concurrency at a
// time, each streamed from source to destination (which checks it against
// its digest), and whatever the destination already has skipped after a
// HEAD. Every operation then fetches the manifest back from the destination
// and checks its digest, and only then points the destination's tag at it:
// a failed job leaves no tag behind.
//
// Registry credentials never reach the job's logs or its error: both go
// through an ociclient.Scrubber of every credential of the manifest.
package oci
