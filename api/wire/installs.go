package wire

import "time"

// Labels select installs in a release. Kubernetes labels: a key is a
// qualified name (an optional DNS subdomain prefix and /), a value at most
// 63 characters of [A-Za-z0-9-_.].
type Labels map[string]string

// InputRequest sets one of an install's inputs.
type InputRequest struct {
	Name  string `json:"name" required:"true"`
	Value string `json:"value"`
	// a sensitive value is stored but never shown again
	Sensitive bool     `json:"sensitive"`
	_         struct{} `additionalProperties:"false"`
}

// CreateInstallRequest creates an install and its runner.
type CreateInstallRequest struct {
	AppID  string         `json:"app_id" required:"true"`
	Name   string         `json:"name" required:"true"`
	Inputs []InputRequest `json:"inputs"`
	Labels Labels         `json:"labels"`
	_      struct{}       `additionalProperties:"false"`
}

// Input is one of an install's inputs: a sensitive one without its value.
type Input struct {
	Name string `json:"name" required:"true"`
	// left out when sensitive
	Value     *string `json:"value,omitempty"`
	Sensitive bool    `json:"sensitive" required:"true"`
}

// RunnerRef names an install's runner.
type RunnerRef struct {
	ID string `json:"id" required:"true"`
}

// Install is one customer's copy of an app, its sensitive input values left
// out.
type Install struct {
	ID     string  `json:"id" required:"true"`
	OrgID  string  `json:"org_id" required:"true"`
	AppID  string  `json:"app_id" required:"true"`
	Name   string  `json:"name" required:"true"`
	Status string  `json:"status" required:"true"`
	Inputs []Input `json:"inputs" required:"true"`
	// counts the accepted changes of the inputs
	InputsVersion int `json:"inputs_version"`
	// the app config version the install runs: the one its last provision, reprovision or deploy_config that
	// succeeded brought it to (0 before any)
	ConfigVersion int `json:"config_version" required:"true"`
	// select the install in a release
	Labels Labels `json:"labels" required:"true"`
	// when work the platform starts on its own (a drift reconcile, a release) may run; empty: at any time
	MaintenanceWindows []MaintenanceWindow `json:"maintenance_windows" required:"true"`
	// the interval of the install's drift checks ("": no schedule)
	DriftEvery string `json:"drift_every"`
	// drift found is applied (under approve-all) in the install's maintenance window
	DriftReconcile bool `json:"drift_reconcile"`
	// approve-all: plans apply at once; prompt: each waits for approval
	ApprovalMode string     `json:"approval_mode"`
	Runner       *RunnerRef `json:"runner,omitempty" nullable:"true"`
	CreatedAt    time.Time  `json:"created_at" required:"true"`
	UpdatedAt    time.Time  `json:"updated_at" required:"true"`
	// in the list only: the install's newest operation (null: none yet)
	LastOperation *LastOperation `json:"last_operation,omitempty" nullable:"true"`
	// in the list only: the sandbox and components the drift checks found drifted
	Drifted []string `json:"drifted,omitempty"`
	// in the list only: the install's health (GET /installs/{id}/health)
	Health *InstallHealthSummary `json:"health,omitempty" nullable:"true"`
}

// LastOperation is an install's newest operation, as the list of installs
// shows it.
type LastOperation struct {
	ID     string `json:"id" required:"true"`
	Kind   string `json:"kind" required:"true"`
	Status string `json:"status" required:"true"`
	Error  string `json:"error,omitempty"`
	// a step of it waits for approval
	WaitingApproval bool       `json:"waiting_approval" required:"true"`
	CreatedAt       time.Time  `json:"created_at" required:"true"`
	FinishedAt      *time.Time `json:"finished_at" nullable:"true"`
}

// InstallList is the org's installs, each with its newest operation and its
// drifted parts.
type InstallList struct {
	Installs []InstallListItem `json:"installs" required:"true"`
}

// InstallListItem is an install as the list shows it: last_operation (null
// when none) and drifted are always there. Its schema is Install's.
type InstallListItem struct {
	Install
	LastOperation *LastOperation        `json:"last_operation"`
	Drifted       []string              `json:"drifted"`
	Health        *InstallHealthSummary `json:"health"`
}

// NewInstall is an install as created, with its runner's one-time
// registration token.
type NewInstall struct {
	Install
	Runner NewRunner `json:"runner" required:"true"`
}

// NewRunner is a new install's runner.
type NewRunner struct {
	ID string `json:"id" required:"true"`
	// one-time token the runner exchanges for its access token; shown only here
	RegistrationToken string `json:"registration_token" required:"true"`
}

// PatchLabelsRequest sets and removes some of an install's labels.
type PatchLabelsRequest struct {
	Set Labels `json:"set"`
	// label keys to remove
	Remove []string `json:"remove"`
	_      struct{} `additionalProperties:"false"`
}

// PutLabelsRequest replaces an install's labels.
type PutLabelsRequest struct {
	Labels Labels   `json:"labels" required:"true"`
	_      struct{} `additionalProperties:"false"`
}

// UpdateInputsRequest sets and removes some of an install's inputs; apply
// starts the update_inputs operation with them.
type UpdateInputsRequest struct {
	// inputs to set (added or changed)
	Set []InputRequest `json:"set"`
	// names of inputs to remove (back to their default)
	Remove []string `json:"remove"`
	// start the update_inputs operation that applies the change
	Apply bool `json:"apply"`
	// with apply: plan the changed steps and stop
	PlanOnly bool     `json:"plan_only"`
	_        struct{} `additionalProperties:"false"`
}

// InputVersion is one accepted change of an install's inputs: the names it
// set or removed, never their values.
type InputVersion struct {
	Version int `json:"version" required:"true"`
	// the inputs it set (names only)
	Set []string `json:"set" required:"true"`
	// the inputs it removed
	Removed   []string  `json:"removed" required:"true"`
	CreatedAt time.Time `json:"created_at" required:"true"`
}

// InputVersionList is an install's inputs versions, newest first.
type InputVersionList struct {
	Versions []InputVersion `json:"versions" required:"true"`
}

// UpdatedInputs is the answer to a change of inputs: sensitive values are
// left out, as in an install.
type UpdatedInputs struct {
	InstallID     string `json:"install_id" required:"true"`
	InputsVersion int    `json:"inputs_version" required:"true"`
	// the inputs version the change made; null when it changed nothing
	Version *InputVersion `json:"version" required:"true" nullable:"true"`
	Inputs  []Input       `json:"inputs" required:"true"`
	// the update_inputs operation, with apply
	Operation *Operation `json:"operation,omitempty"`
}

// ApprovalMode is how an install's plans are approved.
type ApprovalMode struct {
	ApprovalMode string   `json:"approval_mode" required:"true" enum:"approve-all,prompt"`
	_            struct{} `additionalProperties:"false"`
}

// Outputs are the latest outputs of an install's sandbox and components.
type Outputs struct {
	// by sandbox or component name, then output name
	Outputs map[string]map[string]Output `json:"outputs" required:"true"`
}

// Output is one output: its value, or only that it is sensitive.
type Output struct {
	// left out when sensitive
	Value any `json:"value,omitempty"`
	// set (true) only for a sensitive output, whose value is never shown
	Sensitive bool `json:"sensitive,omitempty"`
}

// RunnerHelmInstall is the commands that install an install's runner into
// the customer's cluster.
type RunnerHelmInstall struct {
	// the helm install command line, quoted for a POSIX shell
	Command string `json:"command" required:"true"`
	// the same command, one argument each
	Args      []string `json:"args" required:"true"`
	Namespace string   `json:"namespace" required:"true"`
	// the Secret the runner reads its token from (key token)
	TokenSecret string `json:"token_secret" required:"true"`
	// creates the namespace; run it first
	NamespaceCommand string `json:"namespace_command" required:"true"`
	// creates the token's Secret; replace <TOKEN> with the registration token (or a runner token) first,
	// then run it before command
	SecretCommand string `json:"secret_command" required:"true"`
}
