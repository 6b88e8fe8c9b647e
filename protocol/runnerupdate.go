package protocol

import "time"

// JobTypeRunnerUpdate stages a new runner binary next to the runner: its
// manifest is a RunnerUpdateManifest. Once the job succeeded, the runner
// hands over to the staged binary (docs/architecture/runner-update.md).
const JobTypeRunnerUpdate = "runner_update"

// Media types of a runner binary published as an OCI artifact: an image
// manifest with an empty config and one layer, the executable itself.
const (
	ArtifactTypeRunner    = "application/vnd.outpost.runner.v1"
	MediaTypeRunnerBinary = "application/vnd.outpost.runner.binary.v1"
	// AnnotationRunnerVersion is the runner version the binary reports.
	AnnotationRunnerVersion = "dev.outpost.runner.version"
)

// RunnerUpdateManifest is a rendered runner_update job. Binary names the
// runner artifact in the install's own registry, by digest (its credential
// makes the manifest secret, as every manifest with one).
type RunnerUpdateManifest struct {
	// UpdateID names the update: the runner reports a failed hand-over
	// under it (RunnerHeartbeatRequest.Update).
	UpdateID string `json:"update_id"`
	// Version is the version the new binary must report.
	Version string      `json:"version"`
	Binary  ArtifactRef `json:"binary"`
	// BinaryDigest is the sha256 digest ("sha256:…") of the executable
	// (the artifact's one layer): the staged file is checked against it.
	BinaryDigest string `json:"binary_digest"`
	// HealthDeadlineMS is how long the new binary has to report healthy
	// (its heartbeat accepted, a noop job run) before the runner rolls back.
	HealthDeadlineMS int64 `json:"health_deadline_ms"`
	// DrainTimeoutMS bounds how long the runner waits for its running jobs
	// before it hands over; past it the update is given up (rolled back,
	// with the reason) and the jobs go on. 0: the runner's default.
	DrainTimeoutMS int64 `json:"drain_timeout_ms,omitempty"`
}

// DefaultDrainTimeout is an update's drain timeout (DrainTimeoutMS) when
// none is given.
const DefaultDrainTimeout = time.Hour

// RunnerUpdateOutputs are a runner_update job's outputs.
type RunnerUpdateOutputs struct {
	// Staged is the path of the staged binary ("<runner>.new").
	Staged string `json:"staged"`
	Digest string `json:"digest"`
	// Release is the signed release read from the artifact's annotations:
	// the runner verifies it before it switches (runner/release.go).
	Release RunnerRelease `json:"release"`
}

// Statuses of an update that a runner reports.
const (
	// UpdateRolledBack: the new binary was not healthy in time (or could not
	// be started); the previous one runs again.
	UpdateRolledBack = "rolled_back"
	// UpdateHeld: the release verified, but the customer has not accepted
	// it; the runner holds it until `outpost-runner update accept`.
	UpdateHeld = "held"
	// UpdateAccepting: the customer accepted a held update; the runner
	// stopped claiming and hands over once the gateway queued the new
	// version's health job.
	UpdateAccepting = "accepting"
	// UpdateAccepted: the customer accepted a held update and the runner
	// now runs it (said by the new version).
	UpdateAccepted = "accepted"
)

// RunnerUpdateReport is what the runner that ran a hand-over says of it,
// on its first runner heartbeat after it.
type RunnerUpdateReport struct {
	UpdateID string `json:"update_id"`
	Version  string `json:"version"`
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
}

// Annotations of a runner artifact's manifest that carry its signed release
// (RunnerRelease): the image digest and the signature.
const (
	AnnotationRunnerImageDigest = "dev.outpost.runner.image-digest"
	AnnotationRunnerSignature   = "dev.outpost.runner.signature"
)

// RunnerRelease is what a runner release's signature covers: the version,
// the binary's digest and the runner image's digest ("" when the release
// has no image). The vendor signs it with its ed25519 release key when it
// publishes; a runner verifies it with the public key built into it before
// it switches to the release (docs/SECURITY.md).
type RunnerRelease struct {
	Version      string `json:"version"`
	BinaryDigest string `json:"binary_digest"`
	ImageDigest  string `json:"image_digest,omitempty"`
	// Signature is the base64 (standard) ed25519 signature of SignedText.
	Signature string `json:"signature,omitempty"`
}

// SignedText is the exact text a release's signature is made over.
func (r RunnerRelease) SignedText() []byte {
	return []byte("outpost-runner-release-v1\nversion " + r.Version + "\nbinary " + r.BinaryDigest + "\nimage " + r.ImageDigest + "\n")
}
