package terraform

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/outpost-dev/outpost/planpolicy"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// Files of a job, in its directory.
const (
	moduleDir       = "module"                                  // the extracted module; terraform's working directory
	providersDir    = "providers"                               // the module's vendored providers, extracted
	varsFile        = "zz-outpost.auto.tfvars.json"             // in moduleDir: sorts after the module's own
	varsPipeName    = "variables.tfvars.json"                   // in the job directory: a named pipe (varsPipe)
	backendOverride = "zz_outpost_backend_override.tf"          // in moduleDir
	planFileName    = "outpost.tfplan"                          // in the job directory
	cliConfigFile   = "terraformrc"                             // in the job directory: empty
	backendConfig   = "terraform {\n  backend \"http\" {}\n}\n" // the override's content
)

// Environment variables the plugin sets for terraform.
const (
	envCLIConfig   = "TF_CLI_CONFIG_FILE"
	envCheckpoint  = "CHECKPOINT_DISABLE"
	envHTTPUser    = "TF_HTTP_USERNAME"
	envHTTPPass    = "TF_HTTP_PASSWORD"
	envHTTPAddress = "TF_HTTP_ADDRESS"
	envHTTPLock    = "TF_HTTP_LOCK_ADDRESS"
	envHTTPUnlock  = "TF_HTTP_UNLOCK_ADDRESS"
	// The state backend is the gateway: its retries (1, 2, 4, then 5 s
	// apart, 10 in all: about 40 s) ride out a restart of its database.
	envHTTPRetryMax     = "TF_HTTP_RETRY_MAX"
	envHTTPRetryWaitMax = "TF_HTTP_RETRY_WAIT_MAX"
)

// New returns a terraform plugin for one job.
func New() plugins.Plugin { return &plugin{} }

// manifest is the job's manifest, with the plugin's questions about it.
type manifest struct{ protocol.TerraformManifest }

type plugin struct {
	m       manifest
	outputs json.RawMessage
	stderr  io.Writer          // the job's, once Execute ran
	synced  *protocol.Artifact // the build, in the install's registry (ModuleSync)
	fetched *ociclient.Fetched // what fetch read of the module's artifact
	// providers is the providers layer of the module's artifact: its build
	// vendored them (see vendoredProviders).
	providers []byte
	syncing   chan error          // the sync started by fetchModule, until joinSync
	inputs    bool                // the job's deferred inputs were taken
	checker   *planpolicy.Checker // the plan policies (newChecker)
	secrets   *plugins.Secrets    // the manifest's Scrub, and its deferred inputs'
}

// name is what the job does, for its logs.
func (m *manifest) name() string {
	if m.Destroy {
		return "destroy " + m.Operation
	}
	return m.Operation
}

// plans says the job makes a plan (and so takes variables).
func (m *manifest) plans() bool {
	return m.Operation == protocol.TerraformPlan || m.Operation == protocol.TerraformPlanApply
}

// Cleanup kills what terraform's provisioners left running (see
// adoptOrphans). The runner removes the job's directory, and with it the
// module, the plan and terraform's data directory.
func (p *plugin) Cleanup() error {
	if n := killLeftovers(); n > 0 && p.stderr != nil {
		fmt.Fprintf(p.stderr, "outpost: killed %d process(es) terraform left running\n", n)
	}
	return nil
}
