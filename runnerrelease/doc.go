// Package runnerrelease publishes runner binaries into the vendor's
// registry, as OCI artifacts (protocol.ArtifactTypeRunner), and records
// each published version in the store, where installs' updates find it
// (docs/architecture/runner-update.md). The control plane links it;
// the runner does not.
package runnerrelease
