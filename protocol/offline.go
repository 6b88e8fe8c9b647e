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

// OfflineInstall is what an offline deploy needs of an install beyond the
// bundle: who it is, and its inputs. Sensitive inputs are named, never
// valued: the customer enters them on the machine.
type OfflineInstall struct {
	Format      string            `json:"format"`
	OrgID       string            `json:"org_id"`
	AppID       string            `json:"app_id"`
	AppName     string            `json:"app_name"`
	InstallID   string            `json:"install_id"`
	InstallName string            `json:"install_name"`
	Labels      map[string]string `json:"labels,omitempty"`
	// Inputs are the install's non-sensitive input values, by name.
	Inputs map[string]string `json:"inputs"`
	// SensitiveInputs name the inputs the customer must give on the machine.
	SensitiveInputs []string  `json:"sensitive_inputs,omitempty"`
	ExportedAt      time.Time `json:"exported_at"`
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

// OfflineResult is what an offline deploy did, for the vendor to import. It
// holds no sensitive value: outputs marked sensitive are left out and logs
// are scrubbed of the install's sensitive values before it is written.
type OfflineResult struct {
	Format    string `json:"format"`
	InstallID string `json:"install_id"`
	AppID     string `json:"app_id"`
	// ConfigVersion and BundleIndex (the signed index's digest) say what was
	// deployed.
	ConfigVersion int    `json:"config_version"`
	BundleIndex   string `json:"bundle_index"`
	// Status is "succeeded" or "failed"; Error says why it failed.
	Status     string        `json:"status"`
	Error      string        `json:"error,omitempty"`
	StartedAt  time.Time     `json:"started_at"`
	FinishedAt time.Time     `json:"finished_at"`
	Steps      []OfflineStep `json:"steps"`
	// RunnerVersion is the offline runner's version.
	RunnerVersion string `json:"runner_version"`
}

// OfflineStep is one step of an offline deploy, in the order it ran.
type OfflineStep struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Component string `json:"component,omitempty"`
	// Status: "succeeded", "failed" or "skipped".
	Status     string    `json:"status"`
	Error      string    `json:"error,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	// Outputs are the step's non-sensitive outputs.
	Outputs map[string]any `json:"outputs,omitempty"`
	// Policy holds the plan policies' results, as for a connected step.
	Policy *PolicyResult `json:"policy,omitempty"`
	// Log is the step's log, scrubbed.
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
