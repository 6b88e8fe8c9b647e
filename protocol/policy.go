package protocol

// Plan policies (policy as code): Rego rules a plan must pass before it is
// applied. The vendor's come in the job's manifest (PlanPolicies); the
// customer's are read by the runner from its own directory, and the
// manifest can neither change nor skip them.

// Sources of a plan policy.
const (
	PolicyVendor   = "vendor"   // the app config's policies/*.rego
	PolicyCustomer = "customer" // the runner's --plan-policies directory
)

// PlanPolicies is what a job's manifest says to its plan's policy check: the
// vendor's modules and what the install is.
type PlanPolicies struct {
	// Modules are the vendor's Rego modules (the app config's
	// policies/*.rego), by file name.
	Modules []PolicyModule `json:"modules,omitempty"`
	// Install is the install the plan is for, as the control plane knows it.
	Install PolicyInstall `json:"install"`
	// Step is the operation's step: "sandbox" or a component's name.
	Step string `json:"step,omitempty"`
}

// PolicyModule is one Rego file.
type PolicyModule struct {
	File   string `json:"file"`
	Source string `json:"source"`
}

// PolicyInstall is the install, in a policy's input (input.install).
type PolicyInstall struct {
	ID     string            `json:"id"`
	Name   string            `json:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// Registry is the install's own OCI registry (host[:port]), when known.
	Registry string `json:"registry,omitempty"`
}

// The API serves PolicyResult as it is (api/wire.PolicyResult): its
// comments are the OpenAPI document's descriptions.

// PolicyResult is what one plan policy (a Rego package) said of a step's plan.
type PolicyResult struct {
	// vendor (the app config's policies/*.rego) or customer (the runner's --plan-policies)
	Source string `json:"source" required:"true" enum:"vendor,customer"`
	// the policy's package, e.g. outpost.no_public_bucket
	Policy string `json:"policy" required:"true"`
	// the file that declares it
	File string `json:"file,omitempty"`
	// messages of its deny rule: the plan is not applied
	Deny []string `json:"deny,omitempty"`
	// messages of its warn rule: shown, not blocking
	Warn []string `json:"warn,omitempty"`
	// it could not be evaluated: the plan does not pass
	Error string `json:"error,omitempty"`
}

// Passed says the policy ran and denied nothing.
func (r PolicyResult) Passed() bool { return r.Error == "" && len(r.Deny) == 0 }
