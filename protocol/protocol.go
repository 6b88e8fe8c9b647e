package protocol

import (
	"encoding/json"
	"time"
)

// Version of the runner protocol. The gateway refuses runners that speak a
// newer major version than it knows.
const Version = "1"

// Gateway routes, relative to the gateway's base URL.
const (
	PathRegister        = "/runner/v1/register"
	PathRunnerHeartbeat = "/runner/v1/heartbeat"
	PathClaim           = "/runner/v1/jobs/claim"
	// The following take the job ID in place of {id}.
	PathJobHeartbeat = "/runner/v1/jobs/{id}/heartbeat"
	PathJobLogs      = "/runner/v1/jobs/{id}/logs"
	PathJobComplete  = "/runner/v1/jobs/{id}/complete"
)

// Token prefixes make a leaked token recognisable and let the runner tell a
// registration token from a runner access token.
const (
	RegistrationTokenPrefix = "oprg_"
	RunnerTokenPrefix       = "oprn_"
	APITokenPrefix          = "opat_"
)

// Job types the runner knows.
const (
	JobTypeNoop    = "noop"
	JobTypeCommand = "command"
)

// Job statuses as reported by the runner on completion. The control plane has
// more (queued, running, lost); these are the terminal ones a runner may send.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Log streams.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
	StreamSystem = "system" // lines the runner itself writes about the job
)

// Limits the gateway enforces; the runner keeps under them.
const (
	MaxLogChunkBytes  = 64 << 10 // one chunk's data
	MaxLogBatchChunks = 256      // chunks in one request
	MaxOutputsBytes   = 1 << 20  // a completion's outputs
)

// Intervals are chosen by the server and handed to the runner at registration
// and on every runner heartbeat. Durations are in milliseconds on the wire.
type Intervals struct {
	// ClaimWait is how long the gateway holds a claim long-poll open.
	ClaimWaitMS int64 `json:"claim_wait_ms"`
	// JobHeartbeat is how often a runner renews the lease of a running job.
	JobHeartbeatMS int64 `json:"job_heartbeat_ms"`
	// Lease is how long a lease lasts after each renewal. A runner that cannot
	// renew for this long must stop the job: another attempt may start.
	LeaseMS int64 `json:"lease_ms"`
	// RunnerHeartbeat is how often the runner reports version and capabilities.
	RunnerHeartbeatMS int64 `json:"runner_heartbeat_ms"`
	// QuietHeartbeat is the longest a runner goes without a heartbeat while
	// it has nothing new to report (0: one every RunnerHeartbeat). Its claims
	// and job heartbeats keep it seen meanwhile.
	QuietHeartbeatMS int64 `json:"quiet_heartbeat_ms,omitempty"`
	// LogBatch is how long a runner gathers a job's log lines before it
	// sends them: at most one log request per job per LogBatch. A job's
	// first lines, and its last (once the job has ended), are sent at once.
	LogBatchMS int64 `json:"log_batch_ms"`
}

// Duration helpers.
func (i Intervals) ClaimWait() time.Duration { return time.Duration(i.ClaimWaitMS) * time.Millisecond }
func (i Intervals) JobHeartbeat() time.Duration {
	return time.Duration(i.JobHeartbeatMS) * time.Millisecond
}
func (i Intervals) Lease() time.Duration { return time.Duration(i.LeaseMS) * time.Millisecond }
func (i Intervals) RunnerHeartbeat() time.Duration {
	return time.Duration(i.RunnerHeartbeatMS) * time.Millisecond
}
func (i Intervals) QuietHeartbeat() time.Duration {
	return time.Duration(i.QuietHeartbeatMS) * time.Millisecond
}
func (i Intervals) LogBatch() time.Duration { return time.Duration(i.LogBatchMS) * time.Millisecond }

// RegisterRequest exchanges a registration token for a runner token.
type RegisterRequest struct {
	RegistrationToken string `json:"registration_token"`
	Name              string `json:"name,omitempty"` // e.g. the host name
	Version           string `json:"version,omitempty"`
	// Platform is the runner's "<os>_<arch>" (linux_amd64), as terraform
	// names platforms: builds vendor providers for it. An older runner
	// sends none: its platform is unknown.
	Platform     string   `json:"platform,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
}

// RegisterResponse carries the runner token (shown once) and the intervals.
type RegisterResponse struct {
	RunnerID  string    `json:"runner_id"`
	Token     string    `json:"token"`
	Intervals Intervals `json:"intervals"`
}

// RunnerHeartbeatRequest reports what the runner is and can do.
type RunnerHeartbeatRequest struct {
	Version string `json:"version,omitempty"`
	// Platform: as RegisterRequest.Platform (a runner's binary, so its
	// platform, may change with an update).
	Platform     string   `json:"platform,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	RunningJobs  int      `json:"running_jobs"`
	// ConnectionErrors are the runner's failed calls to the gateway since
	// its last heartbeat went through (the latest few): why it was offline.
	ConnectionErrors []ConnectionError `json:"connection_errors,omitempty"`
	// Update reports how the runner's latest hand-over to a new binary
	// ended, when it rolled back (sent until a heartbeat carrying it is
	// accepted).
	Update *RunnerUpdateReport `json:"update,omitempty"`
	// EndRound names a claim round (ClaimRequest.Round) the runner ends:
	// the gateway answers that round's held claim at once, with a job it
	// claimed or with none, rather than the runner cancelling the request
	// (a job claimed as it is cancelled would be lost until its lease ends).
	EndRound string `json:"end_round,omitempty"`
	// AskHealthCheck asks whether this runner is a new version on trial
	// (RunnerHeartbeatResponse.HealthCheck): sent on its first heartbeat,
	// and on every one while the answer is yes.
	AskHealthCheck bool `json:"ask_health_check,omitempty"`
	// Policy is the customer's policy of the runner (customer.go); Customer
	// its pause and consents.
	Policy   *CustomerPolicy `json:"policy,omitempty"`
	Customer *CustomerState  `json:"customer,omitempty"`
	// HealthSpec is the version of the HealthSpec the runner holds
	// (HealthSpecNone before it has one; "" from a runner that does not
	// read health: it is sent none); Health the components whose health
	// changed since it last reported them (health.go).
	HealthSpec string            `json:"health_spec,omitempty"`
	Health     []ComponentHealth `json:"health,omitempty"`
}

// ConnectionError is one failed call of the runner to the gateway.
type ConnectionError struct {
	At time.Time `json:"at"`
	// Kind: dns, tls, proxy, network, http (an error status, e.g. a proxy's
	// 502), or clock (the gateway's Date differs from the runner's clock).
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// RunnerHeartbeatResponse returns the current intervals.
type RunnerHeartbeatResponse struct {
	// HealthCheck answers AskHealthCheck: an update of this runner to the
	// version it reports is under way and its health job has not run yet.
	// The runner then takes only noop jobs and answers its readiness probe
	// "not ready" until one succeeded: the gate of a self-update, the same
	// for a new binary and a new pod.
	HealthCheck bool      `json:"health_check,omitempty"`
	RunnerID    string    `json:"runner_id"`
	Intervals   Intervals `json:"intervals"`
	// Health is what the runner checks, when it differs from the version
	// it holds (RunnerHeartbeatRequest.HealthSpec; health.go).
	Health *HealthSpec `json:"health,omitempty"`
}

// ClaimRequest asks for at most one job. The gateway answers 200 with a Job,
// or 204 when the long poll ends with no job.
type ClaimRequest struct {
	Capabilities []string `json:"capabilities,omitempty"`
	// GivenInputs: a runner with no free waiting place (so without CapabilityDeferredInputs) takes
	// a job with deferred inputs once they are given.
	GivenInputs bool `json:"given_inputs,omitempty"`
	// Version is the runner's version, recorded on the attempt a claim
	// starts (which binary ran a job, across self-updates).
	Version string `json:"version,omitempty"`
	// OnlyType asks for jobs of that type only: a new runner on trial during
	// a self-update takes only noop jobs (the health check), so no job it
	// would have to give up when it hands over or is rolled back.
	OnlyType string `json:"only_type,omitempty"`
	// Round names the runner's current run of claims, which a heartbeat's
	// EndRound ends: at most MaxRoundLength bytes.
	Round string `json:"round,omitempty"`
	// Unanswered, when set, tells of the round's claims that got no answer
	// (the connection broke or timed out) since its last answered one.
	Unanswered *UnansweredClaims `json:"unanswered,omitempty"`
}

// UnansweredClaims are claims that got no answer: the gateway holding one
// may have claimed a job for it and died before answering. The gateway puts
// back a job claimed for the runner, at its version, in that time, that the
// runner does not hold. Times are relative to the request carrying them, so
// the runner's and the gateway's clocks need not agree.
type UnansweredClaims struct {
	// SentMSAgo is how long before this request the first of them was sent;
	// FailedMSAgo how long before it the last one failed.
	SentMSAgo   int64 `json:"sent_ms_ago"`
	FailedMSAgo int64 `json:"failed_ms_ago"`
	// Held are the attempts the runner runs (job id to attempt).
	Held map[string]int `json:"held,omitempty"`
}

// MaxUnansweredMS bounds UnansweredClaims.SentMSAgo: older claims are left
// to their leases.
const MaxUnansweredMS = int64(time.Hour / time.Millisecond)

// MaxRoundLength bounds a claim round's name (ClaimRequest.Round,
// RunnerHeartbeatRequest.EndRound): the gateway keeps it per runner and
// publishes its end to the other replicas.
const MaxRoundLength = 64

// Job is a claimed job: everything the runner needs, already rendered.
type Job struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	// Attempt is the fencing token: every later call about this job names it,
	// and the gateway refuses a call from an attempt that is no longer current.
	Attempt        int             `json:"attempt"`
	LeaseExpiresAt time.Time       `json:"lease_expires_at"`
	TimeoutMS      int64           `json:"timeout_ms"`
	Manifest       json.RawMessage `json:"manifest"`
	// InputsDeferred: the job was queued before its inputs were known. It prepares, then waits for
	// them (WantInputs on job heartbeats); its timeout counts from when they come.
	InputsDeferred bool `json:"inputs_deferred,omitempty"`
	// InputsWaitMS bounds the wait for deferred inputs: a job that has not
	// had them by then fails (its operation ended without giving them). 0: no
	// bound.
	InputsWaitMS int64 `json:"inputs_wait_ms,omitempty"`
	// Origin is where the job comes from (customer.go).
	Origin *JobOrigin `json:"origin,omitempty"`
}

// CapabilityDeferredInputs, among a runner's capabilities (which are
// otherwise the job types it runs), says it runs jobs queued before their
// inputs are known (Job.InputsDeferred): only such a runner is given them.
const CapabilityDeferredInputs = "deferred-inputs"

// JobHeartbeatRequest renews a lease. WaitMS asks the gateway to hold the
// request open (at most the job heartbeat interval) and answer early when
// cancellation is requested, so a cancel reaches the runner at once.
type JobHeartbeatRequest struct {
	Attempt int   `json:"attempt"`
	WaitMS  int64 `json:"wait_ms,omitempty"`
	// WantInputs: the job's inputs were deferred and the runner does not
	// have them yet. The gateway answers as soon as they are given.
	WantInputs bool `json:"want_inputs,omitempty"`
}

// JobHeartbeatResponse says until when the lease holds, whether the job
// should stop, and the inputs it waits for.
type JobHeartbeatResponse struct {
	LeaseExpiresAt  time.Time `json:"lease_expires_at"`
	CancelRequested bool      `json:"cancel_requested"`
	// Inputs are the job's deferred inputs, when the runner asked for them
	// (WantInputs) and they were given. Their shape is the job type's (a
	// terraform job's: TerraformInputs); like a manifest they may be secret.
	Inputs json.RawMessage `json:"inputs,omitempty"`
}

// LogChunk is one piece of a job's output. Seq starts at 1 and increases by
// one per chunk within an attempt; the gateway stores each (attempt, seq) once.
type LogChunk struct {
	Seq    int64     `json:"seq"`
	Stream string    `json:"stream"`
	Data   string    `json:"data"`
	Time   time.Time `json:"time"`
}

// LogsRequest sends chunks in order.
type LogsRequest struct {
	Attempt int        `json:"attempt"`
	Chunks  []LogChunk `json:"chunks"`
}

// LogsResponse acknowledges every chunk up to and including AckedSeq.
type LogsResponse struct {
	AckedSeq int64 `json:"acked_seq"`
}

// CompleteRequest reports how an attempt ended. Idempotent: the same
// completion sent twice is accepted twice and stored once.
type CompleteRequest struct {
	Attempt  int             `json:"attempt"`
	Status   string          `json:"status"` // succeeded | failed | cancelled
	ExitCode *int            `json:"exit_code,omitempty"`
	Outputs  json.RawMessage `json:"outputs,omitempty"`
	Error    string          `json:"error,omitempty"`
	// LastSeq is the last log chunk the attempt wrote, so the gateway can tell
	// whether every line arrived.
	LastSeq int64 `json:"last_seq"`
}

// Error is the body of every 4xx/5xx answer from the gateway and the API.
type Error struct {
	Code    string `json:"code"`            // machine-readable, e.g. "invalid_field", "stale_attempt"
	Message string `json:"message"`         // for people
	Field   string `json:"field,omitempty"` // the offending field, when there is one
}

// Error codes the runner acts on.
const (
	CodeStaleAttempt = "stale_attempt" // the attempt is no longer current: stop the job, drop its result
	CodeUnauthorized = "unauthorized"
	CodeNotFound     = "not_found"
	CodeInvalid      = "invalid_field"
	CodeTooLarge     = "too_large"
	CodeConflict     = "conflict"
	CodeRateLimited  = "rate_limited" // too many failed authentications: wait Retry-After seconds
)

// NoopManifest is the manifest of a noop job: it sleeps, prints and succeeds
// (or fails with ExitCode) — for tests and benchmarks.
type NoopManifest struct {
	SleepMS  int64             `json:"sleep_ms,omitempty"`
	Lines    []string          `json:"lines,omitempty"`
	ExitCode int               `json:"exit_code,omitempty"`
	Outputs  map[string]string `json:"outputs,omitempty"`
}

// CommandManifest is the manifest of a debug command: argv, run in the job's
// working directory with a clean environment.
type CommandManifest struct {
	Args []string `json:"args"`
	// MaxOutputBytes bounds the output captured into the job's outputs (the
	// logs carry everything).
	MaxOutputBytes int `json:"max_output_bytes,omitempty"`
}

// CommandOutputs is what a command job reports as outputs.
type CommandOutputs struct {
	ExitCode        int    `json:"exit_code"`
	Output          string `json:"output"` // stdout and stderr, interleaved, possibly truncated (head kept)
	OutputTruncated bool   `json:"output_truncated,omitempty"`
}
