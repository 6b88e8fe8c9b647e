// Package releasebundle writes and verifies signed release bundles: one OCI
// image layout, as a tar, holding every artifact an app config version
// deploys (copied by digest from the vendor's registry), the config version
// itself, an index listing them (the bundle's root), and an ed25519
// signature by the org's release key over that index's digest
// (docs/bundles.md).
//
// Write lays the bundle out in a directory with oras-go's OCI store: the
// artifacts' manifests copied, their other blobs found (HEAD) in their
// source but left there, so that a missing one is Write's error; Layout.Tar
// streams the layout and those blobs as one tar of known Size. Verify
// checks a bundle file against a release public key: every blob against its
// digest, the signature, then that everything the signed index reaches is
// there. The runner links it (outpost-runner offline verify), so it links
// no part of the control plane.
package releasebundle
