// Package releasebundle writes and verifies signed release bundles: one OCI
// image layout, as a tar, holding every artifact an app config version
// deploys (copied by digest from the vendor's registry), the config version
// itself, an index listing them (the bundle's root), and an ed25519
// signature by the org's release key over that index's digest
// (docs/bundles.md).
//
// Write builds the layout in a directory with oras-go's OCI store and Tar
// streams it; Verify checks a bundle file against a release public key: the
// signature, then every blob against its digest, then that everything the
// signed index reaches is there. The runner links it (outpost-runner offline
// verify), so it links no part of the control plane.
package releasebundle
