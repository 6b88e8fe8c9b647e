package protocol

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// Destroy policies of a customer's runner (CustomerPolicy.Destroy): whether
// it runs the jobs of a deprovision or a component's teardown.
const (
	DestroyAllow   = "allow"   // it runs them
	DestroyConsent = "consent" // only while the customer's consent holds (Consent)
	DestroyDeny    = "deny"    // never
)

// Consent kinds: the operations a DestroyConsent runner runs only with the
// customer's consent.
const (
	ConsentDeprovision = "deprovision"
	ConsentTeardown    = "teardown_component"
)

// CustomerPolicy is what the customer allows its runner to run, set on the
// runner's side only (flags, environment, chart values) and reported with
// every runner heartbeat; the control plane can read it but never change it.
type CustomerPolicy struct {
	// JobTypes are the job types the runner runs.
	JobTypes []string `json:"job_types"`
	// DebugCommands: the runner runs debug commands (JobTypeCommand);
	// DebugPrograms, when set, are the only programs they may start.
	DebugCommands bool     `json:"debug_commands"`
	DebugPrograms []string `json:"debug_programs,omitempty"`
	// Actions, when set, are the only actions (ActionManifest.Action) the
	// runner runs; action jobs run when JobTypes holds JobTypeAction.
	Actions []string `json:"actions,omitempty"`
	// Destroy is DestroyAllow, DestroyConsent or DestroyDeny.
	Destroy     string `json:"destroy"`
	Concurrency int    `json:"concurrency"`
	// Digest is the sha256 of the policy's canonical JSON (without Digest).
	Digest string `json:"digest"`
}

// Consent is the customer's consent to one kind of operation (ConsentDeprovision,
// ConsentTeardown) until a time, given on the runner (`outpost-runner consent`).
type Consent struct {
	Kind  string    `json:"kind"`
	Until time.Time `json:"until"`
}

// CustomerState is what the runner's customer has set beyond the policy:
// a pause and the consents that hold.
type CustomerState struct {
	// PausedSince is set while the customer has paused the runner: it
	// claims nothing.
	PausedSince *time.Time `json:"paused_since,omitempty"`
	Consents    []Consent  `json:"consents,omitempty"`
}

// JobOrigin says where a claimed job comes from, as the control plane
// records it: the runner checks it against its policy and keeps it in the
// customer's history.
type JobOrigin struct {
	InstallID string `json:"install_id,omitempty"`
	// OperationID and OperationKind: the install operation the job is a step
	// of (e.g. "deprovision"); CommandID: the debug command it runs.
	OperationID   string `json:"operation_id,omitempty"`
	OperationKind string `json:"operation_kind,omitempty"`
	CommandID     string `json:"command_id,omitempty"`
	// ActionRunID: the action run the job is a step of.
	ActionRunID string `json:"action_run_id,omitempty"`
	// StartedBy is who in the vendor's org started the operation or command
	// (the API token's name).
	StartedBy string `json:"started_by,omitempty"`
}

// MaxJobLogBytes is how many bytes of log one job attempt may store; the
// gateway keeps what fits and ends the log with LogTruncatedMarker.
const MaxJobLogBytes = 64 << 20

// LogTruncatedMarker is the line that ends a log cut at the quota.
const LogTruncatedMarker = "[outpost: log truncated: this job attempt wrote more than its log quota]"

// Refusal says why a runner with this policy will not run work ("" when it
// will): a job of jobType (a debug command's program, an action's name), of an operation of
// opKind, given the consents that hold at now. The runner checks every job
// it claims with it, and the control plane refuses such work before it
// queues it, with the same words.
func (p CustomerPolicy) Refusal(jobType, program, opKind string, consents []Consent, now time.Time) string {
	switch {
	case jobType == JobTypeCommand && !p.DebugCommands:
		return "the customer's runner does not allow debug commands"
	case jobType == JobTypeCommand && len(p.DebugPrograms) > 0 && !allowedProgram(p.DebugPrograms, program):
		return fmt.Sprintf("the customer's runner does not allow the program %q in debug commands (allowed: %s)",
			program, strings.Join(p.DebugPrograms, ", "))
	case jobType == JobTypeAction && program != "" && p.actionRefusal(program) != "":
		return p.actionRefusal(program)
	case jobType != "" && jobType != JobTypeCommand && !slices.Contains(p.JobTypes, jobType):
		return fmt.Sprintf("the customer's runner does not allow %s jobs", jobType)
	case opKind != ConsentDeprovision && opKind != ConsentTeardown:
		return ""
	case p.Destroy == DestroyDeny:
		return fmt.Sprintf("the customer's runner does not allow %s", opKind)
	case p.Destroy == DestroyConsent && !slices.ContainsFunc(consents, func(c Consent) bool { return c.Kind == opKind && c.Until.After(now) }):
		return fmt.Sprintf("the customer's runner needs the customer's consent for %s (the customer runs `outpost-runner consent %s` on it)", opKind, opKind)
	}
	return ""
}

// AllowsAction says whether a runner with this policy runs the action name:
// nil, or an error whose text the API shows (409) and the runner fails a
// refused action job with.
func (p CustomerPolicy) AllowsAction(name string) error {
	if why := p.actionRefusal(name); why != "" {
		return errors.New(why)
	}
	return nil
}

func (p CustomerPolicy) actionRefusal(name string) string {
	switch {
	case !slices.Contains(p.JobTypes, JobTypeAction):
		return fmt.Sprintf("the customer's runner does not allow action %q: it runs no action jobs", name)
	case len(p.Actions) > 0 && !slices.Contains(p.Actions, name):
		return fmt.Sprintf("the customer's runner does not allow action %q (allowed: %s)", name, strings.Join(p.Actions, ", "))
	}
	return ""
}

// allowedProgram: program is one of allowed, by path or by base name.
func allowedProgram(allowed []string, program string) bool {
	if slices.Contains(allowed, program) {
		return true
	}
	return !strings.Contains(program, "/") && slices.ContainsFunc(allowed, func(a string) bool { return path.Base(a) == program })
}
