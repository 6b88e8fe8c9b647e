package wire

import "time"

// CustomerPolicy is what a runner's customer allows it to run, as the runner
// reports it: set on the customer's side only, shown here, never changed here.
type CustomerPolicy struct {
	// the job types the runner runs
	JobTypes []string `json:"job_types" required:"true"`
	// whether it runs debug commands (off unless the customer allows them)
	DebugCommands bool `json:"debug_commands" required:"true"`
	// the only programs debug commands may start; empty: any
	DebugPrograms []string `json:"debug_programs,omitempty"`
	// whether deprovisions and component teardowns run: allow, consent (only with the customer's consent), deny
	Destroy     string `json:"destroy" required:"true" enum:"allow,consent,deny"`
	Concurrency int    `json:"concurrency" required:"true"`
	// sha256 of the policy, as the runner computed it
	Digest string `json:"digest" required:"true"`
}

// Consent is the customer's consent, given on the runner, to an operation kind until a time.
type Consent struct {
	// deprovision or teardown_component
	Kind  string    `json:"kind" required:"true"`
	Until time.Time `json:"until" required:"true"`
}
