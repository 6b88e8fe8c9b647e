package wire

import "time"

// Job is one unit of work for one runner. Its manifest, inputs and outputs
// are never shown: they may hold rendered secrets.
type Job struct {
	ID             string  `json:"id" required:"true"`
	OrgID          string  `json:"org_id" required:"true"`
	RunnerID       string  `json:"runner_id" required:"true"`
	InstallID      *string `json:"install_id,omitempty" nullable:"true"`
	IdempotencyKey string  `json:"idempotency_key"`
	Type           string  `json:"type" required:"true"`
	Status         string  `json:"status" required:"true" enum:"queued,running,succeeded,failed,cancelled,lost"`
	Attempt        int     `json:"attempt" required:"true"`
	TimeoutMS      int64   `json:"timeout_ms"`
	// when the current attempt's lease runs out unless its runner heartbeats
	LeaseExpiresAt    *time.Time `json:"lease_expires_at,omitempty"`
	CancelRequestedAt *time.Time `json:"cancel_requested_at,omitempty"`
	ExitCode          *int       `json:"exit_code,omitempty"`
	Error             string     `json:"error,omitempty"`
	// queued before its inputs were known (they come from steps not finished then)
	InputsDeferred bool `json:"inputs_deferred,omitempty"`
	// when its deferred inputs became known
	InputsAt *time.Time `json:"inputs_at,omitempty"`
	// how long it may wait for its deferred inputs, in milliseconds
	InputsWaitMS int64      `json:"inputs_wait_ms,omitempty"`
	CreatedAt    time.Time  `json:"created_at" required:"true"`
	StartedAt    *time.Time `json:"started_at,omitempty"`
	FinishedAt   *time.Time `json:"finished_at,omitempty"`
	UpdatedAt    time.Time  `json:"updated_at" required:"true"`
}

// JobList is an install's jobs, newest first.
type JobList struct {
	Jobs []Job `json:"jobs" required:"true"`
}

// JobDetail is a job with its attempts and status history.
type JobDetail struct {
	Job
	Attempts []JobAttempt `json:"attempts" required:"true"`
	History  []JobEvent   `json:"history" required:"true"`
	// only while the job is queued: why it has not been claimed
	Waiting *JobWaiting `json:"waiting,omitempty"`
}

// JobAttempt is one claim of a job by a runner.
type JobAttempt struct {
	Attempt  int    `json:"attempt" required:"true"`
	RunnerID string `json:"runner_id" required:"true"`
	// the version of the runner that claimed it
	RunnerVersion string     `json:"runner_version,omitempty"`
	Status        string     `json:"status" required:"true"`
	ClaimedAt     time.Time  `json:"claimed_at" required:"true"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
	LastSeq       int64      `json:"last_seq"`
	Error         string     `json:"error,omitempty"`
}

// JobEvent is one entry of a job's status history.
type JobEvent struct {
	Attempt int       `json:"attempt" required:"true"`
	Status  string    `json:"status" required:"true"`
	Message string    `json:"message,omitempty"`
	At      time.Time `json:"at" required:"true"`
}

// JobWaiting says why a queued job has not been claimed.
type JobWaiting struct {
	// runner_offline: its runner is not polling; inputs: its inputs are not known yet and its runner cannot
	// hold it; queue: its runner is online and it waits its turn
	Reason  string `json:"reason" required:"true" enum:"runner_offline,inputs,queue"`
	Message string `json:"message" required:"true"`
	// its place in its runner's queue (1: the next claim takes it)
	Position          int        `json:"position" required:"true"`
	RunnerStatus      string     `json:"runner_status" required:"true"`
	RunnerLastSeenAt  *time.Time `json:"runner_last_seen_at" required:"true" nullable:"true"`
	RunnerRunningJobs int        `json:"runner_running_jobs" required:"true"`
}

// LogChunk is one piece of a job attempt's output.
type LogChunk struct {
	Attempt int       `json:"attempt" required:"true"`
	Seq     int64     `json:"seq" required:"true"`
	Stream  string    `json:"stream" required:"true" enum:"stdout,stderr,system"`
	Data    string    `json:"data" required:"true"`
	Time    time.Time `json:"time" required:"true"`
}

// LogPage is a page of a job's logs.
type LogPage struct {
	Chunks []LogChunk `json:"chunks" required:"true"`
	// pass as ?after= to read on
	NextCursor string `json:"next_cursor" required:"true"`
}

// LogEnd is the data of the `end` event that closes a followed log.
type LogEnd struct {
	Status   string `json:"status" required:"true"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Error    string `json:"error,omitempty"`
}

// LogResume is the data of the `resume` event that ends a follow stream at
// its maximum duration: reconnect with after (or Last-Event-ID) to go on.
type LogResume struct {
	After string `json:"after"`
}

// StreamError is the data of the `error` event that ends a followed log
// when the server failed: reconnect to resume.
type StreamError struct {
	Message string `json:"message"`
}

// CreateCommandRequest runs a debug command on an install's runner.
type CreateCommandRequest struct {
	// argv: the program and its arguments, each at most 4 KiB
	Command        []string `json:"command" required:"true" minItems:"1" maxItems:"64"`
	TimeoutSeconds *int     `json:"timeout_seconds" minimum:"1" maximum:"3600" default:"300"`
	_              struct{} `additionalProperties:"false"`
}

// Command is a debug command run on an install's runner, in the words of
// its request.
type Command struct {
	ID             string   `json:"id" required:"true"`
	InstallID      string   `json:"install_id" required:"true"`
	Command        []string `json:"command" required:"true"`
	TimeoutSeconds int64    `json:"timeout_seconds" required:"true"`
	WorkflowID     string   `json:"workflow_id" required:"true"`
	JobID          *string  `json:"job_id,omitempty"`
	Status         string   `json:"status" required:"true" enum:"queued,running,succeeded,failed,cancelled,lost"`
	ExitCode       *int     `json:"exit_code,omitempty"`
	// stdout and stderr, interleaved, possibly truncated
	Output string `json:"output" required:"true"`
	Error  string `json:"error,omitempty"`
	// the API token that asked for it (its name)
	StartedBy  string     `json:"started_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at" required:"true"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// CommandList is an install's commands, newest first.
type CommandList struct {
	Commands []Command `json:"commands" required:"true"`
}
