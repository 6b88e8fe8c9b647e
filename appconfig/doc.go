// Package appconfig reads, validates and renders an app config: the
// directory of TOML files that defines an app (its sandbox, its inputs and its
// components) and the terraform modules it points at.
//
// Load (or FromArchive, for a synced version) validates a config as a whole
// and returns every problem at once (Problems), each naming the file, the key
// and why. A valid Config is the model the control plane works from: each
// component with its effective dependencies (declared plus those implied by
// template references), a dependency Graph with a deterministic deploy order
// and teardown order, Render for the variables and environment of a job
// manifest, and ModuleArchive for the module it carries.
//
// The format is described in docs/APP_CONFIG.md and, as a JSON Schema, in
// schemas/app-config.schema.json.
package appconfig
