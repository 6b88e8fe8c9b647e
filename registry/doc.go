// Package registry is an embedded OCI registry: the CNCF distribution registry
// (v3) running in-process on a loopback listener of its own.
//
// Outpost uses it wherever a real registry is needed without running a
// separate service: the vendor registry of the embedded control plane, the
// install's own registry started by an example sandbox (cmd/outpost-registry),
// and every test that pushes or pulls an artifact.
//
// Storage is a directory (it survives a restart) or memory. On disk, blobs
// are served from their files (blobs.go) rather than through distribution's
// per-request 4 MiB read buffer. Access is decided
// by an Authorizer: Static (one basic-auth user, for an install's registry) or
// Tokens (short-lived credentials scoped to repositories, issued by the
// control plane with IssueCredential). The registry's own logging is silenced,
// so it never logs a credential.
package registry
