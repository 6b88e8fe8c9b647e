package protocol

import "encoding/json"

// JobTypeTerraform runs terraform on a module: plan, apply of a saved plan,
// or outputs.
const JobTypeTerraform = "terraform"

// Terraform operations.
const (
	TerraformPlan    = "plan"    // init + plan (Destroy: a destroy plan) → saved plan + text + JSON
	TerraformApply   = "apply"   // init + apply exactly PlanFile
	TerraformOutputs = "outputs" // init + output
	// TerraformPlanApply plans and applies in one "terraform apply -auto-approve", for installs that
	// approve every plan; its plan is what apply printed before applying.
	TerraformPlanApply = "plan_apply"
)

// TerraformManifest is a fully rendered terraform job: the runner renders
// nothing. It is stored with the job and never put in Temporal history (it
// may carry sensitive variables and the state credential).
type TerraformManifest struct {
	Operation string `json:"operation"`
	Destroy   bool   `json:"destroy,omitempty"`
	// Workspace names the state, e.g. "ins_123.sandbox" or "ins_123.component.db".
	Workspace string `json:"workspace"`
	// Module is the module directory as a gzipped tar archive; or else
	// ModuleArtifact names the terraform-module artifact (in the install's
	// own registry) the runner fetches it from.
	Module         []byte       `json:"module,omitempty"`
	ModuleArtifact *ArtifactRef `json:"module_artifact,omitempty"`
	// ModuleSync has a plan_apply job copy the step's build into the install's registry itself, as a
	// sync job would (ModuleArtifact and Module are then empty); a registry not known yet (the
	// sandbox still runs) is empty here and comes with the deferred inputs (TerraformInputs.Registry).
	ModuleSync *TerraformModuleSync `json:"module_sync,omitempty"`
	// Variables are the module's input variables, rendered. For a job whose
	// inputs are deferred (Job.InputsDeferred) they come later, as
	// TerraformInputs: the job fetches its module and runs init meanwhile.
	Variables map[string]json.RawMessage `json:"variables,omitempty"`
	// Env are environment variables for terraform, rendered (may be secret).
	Env map[string]string `json:"env,omitempty"`
	// Backend is terraform's http backend on the gateway, with a credential
	// that is valid only while this job attempt runs.
	Backend TerraformBackend `json:"backend"`
	// PlanFile is, for apply, the approved saved plan.
	PlanFile []byte `json:"plan_file,omitempty"`
	// NoLock has a plan run without the state lock (-lock=false): a drift
	// check, which must never hold up an operation's own plans and applies.
	NoLock bool `json:"no_lock,omitempty"`
	// Policies are the vendor's plan policies and what the install is; the
	// runner checks every plan against them and its customer's own.
	Policies *PlanPolicies `json:"policies,omitempty"`
	// Scrub are the install's sensitive values the job's templates may read
	// (sensitive inputs, sensitive outputs of the sandbox and components):
	// the runner replaces each with "(sensitive value)" in the job's logs,
	// plan text, plan JSON, policy messages and error before they leave the
	// account, whatever the module does with them.
	Scrub []string `json:"scrub,omitempty"`
}

// TerraformModuleSync is a module's build and where the job copies it.
//
// With the destination's registry known, the job copies the build, then
// fetches the module from the install's registry. Without, it fetches the
// module from the source (checked against its digest) and runs init while
// it waits for its inputs, then copies the build before it plans: the
// module it applies is the digest the install's registry then holds.
type TerraformModuleSync struct {
	// Source is the build in the vendor's registry, by digest.
	Source ArtifactRef `json:"source"`
	// Destination is the component's repository in the install's registry.
	Destination OCIDestination `json:"destination"`
}

// CapabilityModuleSync, among a runner's capabilities, says its terraform
// jobs take TerraformManifest.ModuleSync.
const CapabilityModuleSync = "terraform-module-sync"

// TerraformInputs are a terraform job's deferred inputs.
type TerraformInputs struct {
	Variables map[string]json.RawMessage `json:"variables"`
	// Registry is the install's registry, for a ModuleSync whose
	// destination was not known when the job was queued.
	Registry *RegistryAccess `json:"registry,omitempty"`
	// Scrub adds to TerraformManifest.Scrub the sensitive outputs known only
	// now (the step's dependencies').
	Scrub []string `json:"scrub,omitempty"`
}

// TerraformBackend configures terraform's standard http backend.
type TerraformBackend struct {
	Address       string `json:"address"`
	LockAddress   string `json:"lock_address"`
	UnlockAddress string `json:"unlock_address"`
	// Username is the job's ID; when empty the runner fills in the ID of
	// the job it runs, so a manifest can be rendered before its job exists.
	Username string `json:"username,omitempty"`
	// Password is the job's state credential (store.NewStateToken).
	Password string `json:"password"`
}

// TerraformPlanOutputs are a plan job's outputs.
type TerraformPlanOutputs struct {
	HasChanges bool            `json:"has_changes"`
	PlanFile   []byte          `json:"plan_file"`
	PlanText   string          `json:"plan_text"`
	PlanJSON   json.RawMessage `json:"plan_json,omitempty"`
	Add        int             `json:"add"`
	Change     int             `json:"change"`
	Destroy    int             `json:"destroy"`
	// Truncated says PlanJSON was left out, and PlanText perhaps cut, to keep
	// the outputs under protocol.MaxOutputsBytes (the job's logs have the
	// whole plan). PlanFile is never cut.
	Truncated bool `json:"truncated,omitempty"`
	// Policies are what each plan policy said of the plan (none when there
	// are none); a plan any of them denies is not applied.
	Policies []PolicyResult `json:"policies,omitempty"`
}

// TerraformPlanApplyOutputs are a plan_apply job's outputs: the plan (no
// saved plan file, no JSON) and whether it was applied (it had changes). The
// module's outputs are read from the state the apply stored.
type TerraformPlanApplyOutputs struct {
	Plan    TerraformPlanOutputs `json:"plan"`
	Applied bool                 `json:"applied"`
	// Synced is the build as the install's registry serves it, after a
	// ModuleSync.
	Synced *Artifact `json:"synced,omitempty"`
}

// TerraformOutput is one module output.
type TerraformOutput struct {
	Value     json.RawMessage `json:"value"`
	Sensitive bool            `json:"sensitive,omitempty"`
}

// TerraformApplyOutputs are an outputs job's outputs, and what the control
// plane records as a step's outputs. (An apply job has none: the control
// plane reads the outputs from the state the apply stored.)
type TerraformApplyOutputs struct {
	Outputs map[string]TerraformOutput `json:"outputs"`
}

// State backend routes on the gateway. Terraform authenticates with HTTP
// basic auth: username = job ID, password = the job's state credential.
const (
	PathState = "/runner/v1/state/{workspace}"
	PathLock  = "/runner/v1/state/{workspace}/lock"
)
