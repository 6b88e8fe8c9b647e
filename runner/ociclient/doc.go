// Package ociclient is how runner code reaches OCI registries described by
// protocol.RegistryAccess: oras-go repositories with the access's credential
// (basic auth, or anonymous; token challenges are followed), FetchManifest,
// which checks a manifest against its digest and reports a registry's
// refusal with the registry's own answer, a Scrubber that keeps credentials
// out of logs and errors, FetchTerraformModule, with which the terraform
// plugin takes a module from a registry, and Sync, which copies an artifact
// by digest into a Target (from memory, for what the job fetched already:
// Fetched).
//
// It links no part of the control plane.
package ociclient
