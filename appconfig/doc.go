// Package appconfig reads, validates and renders an app config: the
// directory of TOML files that defines an app (its sandbox, its inputs, its
// components and its actions) and the terraform modules, helm charts, values
// files and action scripts it points at. Actions (actions/<name>.toml) are
// checked like the rest; Action.CheckRunInputs types a run's inputs and
// RenderActionEnv renders an action's environment. Any template may read
// the outputs of an install's latest succeeded run of an action
// (.actions.<action>.outputs.<name>): Data.Actions holds them, for the
// actions ActionsRead names.
//
// Load (or FromArchive, for a synced version) validates a config as a whole
// and returns every problem at once (Problems), each naming the file, the key
// and why. A valid Config is the model the control plane works from: each
// component (terraform_module, helm_chart or container_image) with its
// effective dependencies (declared plus those implied by template
// references), a dependency Graph with a deterministic deploy order and
// teardown order, RenderComponent for a terraform job's variables and
// environment, RenderHelmValues and HelmValuesFiles for a helm job's values,
// ModuleArchive and ChartArchive for the directory a job carries, and
// BuildInput for what a build consumes, with a digest that tells whether it
// changed between two config versions.
//
// The format is described in docs/APP_CONFIG.md and, as a JSON Schema, in
// schemas/app-config.schema.json.
package appconfig
