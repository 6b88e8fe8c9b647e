package wire

import "time"

// The offline deploy's files (docs/bundles.md, "Offline deploy"), as the API
// answers and takes them; the same JSON as protocol.OfflineInstall and
// protocol.OfflineResult (api/offline_test.go holds them together).

// OfflineInstall is what an air-gapped runner's offline deploy needs of an
// install beyond the bundle. Sensitive inputs are named, never valued: the
// customer enters them on the machine.
type OfflineInstall struct {
	// outpost.offline-install/v1
	Format      string            `json:"format" required:"true"`
	OrgID       string            `json:"org_id" required:"true"`
	AppID       string            `json:"app_id" required:"true"`
	AppName     string            `json:"app_name" required:"true"`
	InstallID   string            `json:"install_id" required:"true"`
	InstallName string            `json:"install_name" required:"true"`
	Labels      map[string]string `json:"labels,omitempty"`
	// the install's non-sensitive input values, by name
	Inputs map[string]string `json:"inputs" required:"true"`
	// the inputs the customer must give on the machine (set on the install, or declared sensitive by the app's latest
	// config)
	SensitiveInputs []string  `json:"sensitive_inputs,omitempty"`
	ExportedAt      time.Time `json:"exported_at" required:"true"`
}

// OfflineResult is what an offline deploy did (outpost-runner offline deploy writes it), to import.
type OfflineResult struct {
	// outpost.offline-result/v1
	Format    string `json:"format"`
	InstallID string `json:"install_id"`
	AppID     string `json:"app_id"`
	// the config version deployed: one of the install's app's
	ConfigVersion int `json:"config_version"`
	// the digest of the signed bundle index deployed; with started_at it names the result (importing it again
	// answers the operation it made)
	BundleIndex string `json:"bundle_index"`
	// succeeded or failed
	Status     string        `json:"status"`
	Error      string        `json:"error,omitempty"`
	StartedAt  time.Time     `json:"started_at"`
	FinishedAt time.Time     `json:"finished_at"`
	Steps      []OfflineStep `json:"steps"`
	// the offline runner's version
	RunnerVersion string `json:"runner_version"`
}

// OfflineStep is one step of an offline deploy, in the order it ran.
type OfflineStep struct {
	Name string `json:"name"`
	// sandbox, sync, component or hook (an action's lifecycle hook: before:<action>[:<component>], after:…)
	Kind      string `json:"kind"`
	Component string `json:"component,omitempty"`
	// succeeded, failed or skipped
	Status     string    `json:"status"`
	Error      string    `json:"error,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	// the step's non-sensitive outputs: a succeeded sandbox's or component's become the install's
	Outputs map[string]any `json:"outputs,omitempty"`
	// the plan policies' results
	Policy *PolicyResult `json:"policy,omitempty"`
	// the step's log, scrubbed of sensitive values
	Log string `json:"log,omitempty"`
}
