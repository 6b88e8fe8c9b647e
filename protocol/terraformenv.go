package protocol

import "strings"

// runnerEnv is an environment variable (or, with prefix, every variable
// whose name starts with name) that the runner sets for terraform itself,
// and why.
type runnerEnv struct {
	name   string
	prefix bool
	why    string
}

const (
	whyUnattended = "the runner runs terraform unattended, with no log output mixed into the job's log"
	whyArgs       = "the runner chooses terraform's arguments, workspace and providers (and terraform-exec refuses it)"
)

// terraformRunnerEnv is the one list of the names the runner sets for
// terraform itself: the terraform plugin refuses them in a
// TerraformManifest's Env, and the control plane refuses them in a
// config's env_vars at sync. It holds terraform-exec's prohibited names
// (tfexec.ProhibitedEnv) but TF_VAR_*, which the control plane moves into
// the manifest's Variables.
var terraformRunnerEnv = []runnerEnv{
	{name: "TF_CLI_CONFIG_FILE", why: "the runner gives terraform its own CLI configuration (outpost-runner --terraform-cli-config: provider mirrors and credentials are the runner's to configure), or an empty one"},
	{name: "TF_HTTP_", prefix: true, why: "terraform's state backend is the control plane's; the runner sets the backend's address, lock, credential and retries"},
	{name: "CHECKPOINT_DISABLE", why: "the runner sets it to 1: terraform never calls HashiCorp's checkpoint service"},
	{name: "TF_IN_AUTOMATION", why: whyUnattended},
	{name: "TF_INPUT", why: whyUnattended},
	{name: "TF_LOG", why: whyUnattended},
	{name: "TF_LOG_CORE", why: whyUnattended},
	{name: "TF_LOG_PATH", why: whyUnattended},
	{name: "TF_LOG_PROVIDER", why: whyUnattended},
	{name: "TF_CLI_ARGS", why: whyArgs},
	{name: "TF_CLI_ARGS_", prefix: true, why: whyArgs},
	{name: "TF_WORKSPACE", why: whyArgs},
	{name: "TF_REATTACH_PROVIDERS", why: whyArgs},
	{name: "TF_APPEND_USER_AGENT", why: whyArgs},
	{name: "TF_DISABLE_PLUGIN_TLS", why: whyArgs},
	{name: "TF_SKIP_PROVIDER_VERIFY", why: whyArgs},
	{name: "OUTPOST_", prefix: true, why: "OUTPOST_* are the runner's own settings for a job (OUTPOST_JOB_ID, OUTPOST_TERRAFORM, " +
		"OUTPOST_TERRAFORM_INIT_CACHE, OUTPOST_KUBE_ASSETS, OUTPOST_PLAN_POLICIES…): name the variable otherwise"},
}

// TerraformRunnerEnv says why a terraform job may not set the environment
// variable name ("the runner sets TF_LOG itself: …"): the runner sets it
// itself. It is "" for a name the job may set.
func TerraformRunnerEnv(name string) string {
	for _, e := range terraformRunnerEnv {
		if name == e.name || (e.prefix && strings.HasPrefix(name, e.name)) {
			return "the runner sets " + name + " itself: " + e.why
		}
	}
	return ""
}

// TerraformRunnerEnvNames are the names TerraformRunnerEnv refuses, in its
// order; a prefix ends with "*" ("TF_HTTP_*").
func TerraformRunnerEnvNames() []string {
	out := make([]string, len(terraformRunnerEnv))
	for i, e := range terraformRunnerEnv {
		out[i] = e.name
		if e.prefix {
			out[i] += "*"
		}
	}
	return out
}
