package wire

import "time"

// AppConfig is a config version as the API shows it. Sensitive input
// defaults are left out; variables are not shown (they are in the files).
type AppConfig struct {
	AppID     string    `json:"app_id" required:"true"`
	Version   int       `json:"version" required:"true"`
	CreatedAt time.Time `json:"created_at" required:"true"`
	// only in a sync's answer: false when the config was the latest version already
	Created    *bool             `json:"created,omitempty"`
	App        ConfigApp         `json:"app" required:"true"`
	Sandbox    ConfigSandbox     `json:"sandbox" required:"true"`
	Inputs     []ConfigInput     `json:"inputs" required:"true"`
	Components []ConfigComponent `json:"components" required:"true"`
	// the actions (actions/<name>.toml), sorted by name
	Actions []ConfigAction `json:"actions" required:"true"`
	// the runbooks (runbooks/<name>.toml), sorted by name
	Runbooks []ConfigRunbook `json:"runbooks" required:"true"`
	// the components grouped for deployment: each level depends only on earlier ones
	Levels [][]string `json:"levels" required:"true"`
	Files  []string   `json:"files" required:"true"`
}

// ConfigApp is the app a config is for.
type ConfigApp struct {
	Name        string `json:"name" required:"true"`
	Description string `json:"description" required:"true"`
}

// ConfigSandbox is a config's sandbox: the install's base infrastructure.
type ConfigSandbox struct {
	Source string `json:"source" required:"true"`
}

// ConfigInput is an input a config declares: a typed value each install is
// given.
type ConfigInput struct {
	Name      string `json:"name" required:"true"`
	Type      string `json:"type" required:"true" enum:"string,number,bool,list,map"`
	Required  bool   `json:"required" required:"true"`
	Sensitive bool   `json:"sensitive" required:"true"`
	// left out when sensitive
	Default     any    `json:"default,omitempty"`
	Description string `json:"description,omitempty"`
}

// ConfigComponent is a component a config defines.
type ConfigComponent struct {
	Name string `json:"name" required:"true"`
	Type string `json:"type" required:"true"`
	// a terraform_module's module or a helm_chart's chart: a directory of the config
	Source string `json:"source,omitempty"`
	// a container_image's image reference
	Image string `json:"image,omitempty"`
	File  string `json:"file" required:"true"`
	// effective: declared and implied by template references
	Dependencies         []string `json:"dependencies" required:"true"`
	DeclaredDependencies []string `json:"declared_dependencies" required:"true"`
}

// ConfigAction is an action a config defines: steps the install's runner
// runs, and what starts them.
type ConfigAction struct {
	Name        string `json:"name" required:"true"`
	File        string `json:"file" required:"true"`
	Description string `json:"description,omitempty"`
	// how long each step may run
	TimeoutSeconds int `json:"timeout_seconds" required:"true"`
	// a run takes the install's lock, as an operation does
	Exclusive bool `json:"exclusive" required:"true"`
	// each run's result is recorded as health: of the components it names,
	// or of the install's check "action:<name>"
	Health bool `json:"health" required:"true"`
	// the components a health action checks (none: an install-level check)
	Components []string              `json:"components,omitempty"`
	Triggers   []ConfigActionTrigger `json:"triggers" required:"true"`
	// the typed inputs a manual run is given
	Inputs []ConfigInput `json:"inputs" required:"true"`
	// the steps' names, in the order they run
	Steps []string `json:"steps" required:"true"`
}

// ConfigActionTrigger is what starts an action.
type ConfigActionTrigger struct {
	Type string `json:"type" required:"true" enum:"manual,cron,before,after"`
	// a cron trigger's cron expression
	Schedule string `json:"schedule,omitempty"`
	// the operation a before or after hook guards
	Operation string `json:"operation,omitempty" enum:"provision,deprovision,reprovision,update_inputs,deploy_config,deploy_component,teardown_component"`
	// the component of a deploy_component or teardown_component hook
	Component string `json:"component,omitempty"`
	// when an after hook runs
	When string `json:"when,omitempty" enum:"success,failure,always"`
	// a failing before hook does not stop the operation
	ContinueOnFailure bool `json:"continue_on_failure,omitempty"`
	// a hook's values for its action's inputs: input name → value or
	// template, rendered when the hook runs
	Inputs map[string]string `json:"inputs,omitempty"`
}

// SyncedAppConfig is a sync's answer: the config version and the builds it
// uses.
type SyncedAppConfig struct {
	AppConfig
	// the builds this version uses, one per component that has a build
	Builds []ConfigBuild `json:"builds" required:"true"`
}

// ConfigBuild is a build a config version uses, as a sync answers it.
type ConfigBuild struct {
	ID            string `json:"id" required:"true"`
	Component     string `json:"component" required:"true"`
	ComponentType string `json:"component_type" required:"true"`
	SourceDigest  string `json:"source_digest" required:"true"`
	Status        string `json:"status" required:"true" enum:"queued,running,succeeded,failed"`
	// the artifact's digest, once the build succeeded
	Digest string `json:"digest,omitempty"`
	// the version that queued the build: an earlier one when the component did not change
	ConfigVersion int    `json:"config_version" required:"true"`
	WorkflowID    string `json:"workflow_id" required:"true"`
	// true: an existing build (succeeded or under way) is used; false: this sync queued it
	Reused bool   `json:"reused" required:"true"`
	Error  string `json:"error,omitempty"`
}

// ConfigVersion is one version in an app's list of config versions.
type ConfigVersion struct {
	Version   int       `json:"version" required:"true"`
	CreatedAt time.Time `json:"created_at" required:"true"`
}

// AppConfigList is an app's config versions, newest first.
type AppConfigList struct {
	Configs []ConfigVersion `json:"configs" required:"true"`
}

// InvalidConfig is the answer (422) to a config that does not validate:
// every problem, each with its file and key.
type InvalidConfig struct {
	// invalid_config
	Code    string          `json:"code" required:"true"`
	Message string          `json:"message" required:"true"`
	Errors  []ConfigProblem `json:"errors" required:"true"`
}

// ConfigProblem is one problem of a config.
type ConfigProblem struct {
	// the file, relative to the config's root
	File string `json:"file" required:"true"`
	// the dotted key in the file, e.g. inputs[1].type
	Key     string `json:"key" required:"true"`
	Message string `json:"message" required:"true"`
}

// Build turns a component's source into an artifact in the vendor's
// registry. The artifact's fields are set only once it succeeded.
type Build struct {
	ID            string `json:"id" required:"true"`
	AppID         string `json:"app_id" required:"true"`
	Component     string `json:"component" required:"true"`
	ComponentType string `json:"component_type" required:"true"`
	// the app config version that queued the build
	ConfigVersion int `json:"config_version" required:"true"`
	// digest of what the build consumed; a later config version whose component has the same source uses this build
	SourceDigest string `json:"source_digest" required:"true"`
	Status       string `json:"status" required:"true" enum:"queued,running,succeeded,failed"`
	WorkflowID   string `json:"workflow_id" required:"true"`
	// the build runner's job, once queued
	JobID *string `json:"job_id,omitempty"`
	// the artifact's repository in the vendor's registry
	Repository string `json:"repository" required:"true"`
	Tag        string `json:"tag" required:"true"`
	// the artifact's digest; only when the build succeeded
	Digest string `json:"digest,omitempty"`
	// the artifact manifest's media type; only when the build succeeded
	MediaType string `json:"media_type,omitempty"`
	// the artifact's type; only when the build succeeded
	ArtifactType string `json:"artifact_type,omitempty"`
	// the artifact's size in bytes; only when the build succeeded
	Size int64 `json:"size,omitempty"`
	// why the build failed
	Error string `json:"error,omitempty"`
	// how a docker_build image was made, as its manifest's annotations say: dev.outpost.source-digest,
	// dev.outpost.build-args (a JSON object), dev.outpost.builder
	Provenance map[string]string `json:"provenance,omitempty"`
	// the images a helm_chart's build copied, by digest, beside the chart (its images, with relocate_images): a
	// bundle export carries them
	Images     []BuildImage `json:"images,omitempty"`
	CreatedAt  time.Time    `json:"created_at" required:"true"`
	FinishedAt *time.Time   `json:"finished_at,omitempty"`
}

// BuildImage is an image a chart's build copied into the vendor's registry.
type BuildImage struct {
	// the image as the component lists it ("docker.io/library/nginx:1.27")
	Reference string `json:"reference" required:"true"`
	// its copy's repository in the vendor's registry ("<build repository>/images/docker.io/library/nginx")
	Repository string `json:"repository" required:"true"`
	// its manifest's digest
	Digest string `json:"digest" required:"true"`
	// its size in bytes: manifests, configs and layers
	Size int64 `json:"size" required:"true"`
}

// BuildList is an app's builds.
type BuildList struct {
	Builds []Build `json:"builds" required:"true"`
}

// RebuildRequest builds a component of the latest config version.
type RebuildRequest struct {
	// a component of the app's latest config version that has a build (terraform_module, helm_chart,
	// container_image, docker_build)
	Component string   `json:"component" required:"true"`
	_         struct{} `additionalProperties:"false"`
}

// InstallComponent is which build an install's component runs: set when a
// deploy synced that build into the install's registry and applied it.
type InstallComponent struct {
	Component string `json:"component" required:"true"`
	BuildID   string `json:"build_id" required:"true"`
	// the artifact's digest in the install's registry
	Digest string `json:"digest" required:"true"`
	// the artifact in the install's registry (repository@digest)
	Reference string `json:"reference" required:"true"`
	// the app config version the component was deployed from
	ConfigVersion int       `json:"config_version" required:"true"`
	UpdatedAt     time.Time `json:"updated_at" required:"true"`
}

// InstallComponentList is the builds an install's components run.
type InstallComponentList struct {
	Components []InstallComponent `json:"components" required:"true"`
}
