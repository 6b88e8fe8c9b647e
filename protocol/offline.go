package protocol

import (
	"fmt"
	"time"
)

// Formats of the files an offline deploy reads and writes (docs/bundles.md,
// "Offline deploy"): the vendor exports an install file
// (`outpostctl installs export`), the customer's air-gapped runner deploys a
// release bundle with it (`outpost-runner offline deploy`) and writes a
// result, which the vendor imports (`outpostctl installs import-result`).
const (
	OfflineInstallFormat = "outpost.offline-install/v1"
	OfflineResultFormat  = "outpost.offline-result/v1"
)

// The API serves the offline files as they are (api/wire.OfflineInstall,
// OfflineResult, OfflineStep): the comments of this file's types are the
// OpenAPI document's descriptions.

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

// Check names the first field of an install file that is missing or wrong.
func (f OfflineInstall) Check() error {
	switch {
	case f.Format != OfflineInstallFormat:
		return fmt.Errorf("format: %q, want %q", f.Format, OfflineInstallFormat)
	case f.InstallID == "":
		return fmt.Errorf("install_id: missing")
	case f.AppID == "":
		return fmt.Errorf("app_id: missing")
	}
	return nil
}

// Offline step kinds (OfflineStep.Kind).
const (
	OfflineStepSandbox   = "sandbox"
	OfflineStepSync      = "sync"
	OfflineStepComponent = "component"
	OfflineStepHook      = "hook" // an action's lifecycle hook (Name: before:<action>[:<component>], after:…)
)

// OfflineResult is what an offline deploy did (outpost-runner offline deploy writes it), to import. It holds no
// sensitive value: outputs marked sensitive are left out and logs are scrubbed of the install's sensitive values
// before it is written.
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

// Check names the first field of a result that is missing or wrong.
func (r OfflineResult) Check() error {
	switch {
	case r.Format != OfflineResultFormat:
		return fmt.Errorf("format: %q, want %q", r.Format, OfflineResultFormat)
	case r.InstallID == "":
		return fmt.Errorf("install_id: missing")
	case r.ConfigVersion < 1:
		return fmt.Errorf("config_version: %d, want 1 or more", r.ConfigVersion)
	case r.Status != "succeeded" && r.Status != "failed":
		return fmt.Errorf("status: %q, want succeeded or failed", r.Status)
	}
	for i, s := range r.Steps {
		if s.Name == "" {
			return fmt.Errorf("steps[%d].name: missing", i)
		}
		if s.Status != "succeeded" && s.Status != "failed" && s.Status != "skipped" {
			return fmt.Errorf("steps[%d].status: %q, want succeeded, failed or skipped", i, s.Status)
		}
	}
	return nil
}
