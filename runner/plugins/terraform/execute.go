package terraform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// Execute runs the operation. A terraform failure is an error carrying
// terraform's diagnostics. When ctx ends (the job is cancelled),
// terraform-exec interrupts terraform, which stops gracefully and releases
// its lock. The install's sensitive values (the manifest's Scrub) are
// scrubbed from its logs, its plan and its error.
func (p *plugin) Execute(ctx context.Context, run plugins.Run) (int, error) {
	stdout, stderr := p.secrets.Writer(run.Stdout), p.secrets.Writer(run.Stderr)
	run.Stdout, run.Stderr = stdout, stderr
	code, err := p.execute(ctx, run)
	err = errors.Join(p.secrets.Error(err), stdout.Flush(), stderr.Flush())
	return code, err
}

func (p *plugin) execute(ctx context.Context, run plugins.Run) (int, error) {
	m := &p.m
	if err := adoptOrphans(); err != nil {
		fmt.Fprintf(run.Stderr, "outpost: cannot adopt what terraform leaves behind: %v\n", err)
	}
	p.stderr = run.Stderr
	env := envMap(run.Env)
	bin, err := Find(env[EnvTerraform], env["PATH"], run.Dir)
	if err != nil {
		return 0, err
	}
	if err := p.newChecker(ctx, env); err != nil {
		return 0, err
	}
	dir := filepath.Join(run.Dir, moduleDir)
	defer p.joinSync()
	if err := p.fetchModule(ctx, run); err != nil {
		return 0, err
	}
	if len(m.Module) == 0 && m.ModuleSync != nil {
		// Its source could not be read: the install's registry may hold
		// the build already.
		if err := p.awaitInputs(ctx, run); err != nil {
			return 0, err
		}
		if err := p.fetchSynced(ctx, run); err != nil {
			return 0, err
		}
	}
	if err := extractModule(m.Module, dir); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, backendOverride), []byte(backendConfig), 0o600); err != nil {
		return 0, err
	}
	if m.Backend.Username == "" {
		if m.Backend.Username = env["OUTPOST_JOB_ID"]; m.Backend.Username == "" {
			return 0, errors.New("backend.username: required (the job's ID) when the runner does not give the job its ID")
		}
	}
	tfEnv, err := p.terraformEnv(env, run)
	if err != nil {
		return 0, err
	}

	tf, err := tfexec.NewTerraform(dir, bin)
	if err != nil {
		return 0, err
	}
	if err := tf.SetEnv(tfEnv); err != nil {
		return 0, err
	}
	tf.SetStderr(run.Stderr)
	tf.SetStdout(run.Stdout)
	fmt.Fprintf(run.Stdout, "outpost: terraform %s: %s of workspace %s\n", bin, m.name(), m.Workspace)
	// init runs without terraform-exec, which would first run "terraform
	// version" for its compatibility checks: a whole terraform process. The
	// other commands the plugin runs through it do not ask for the version.
	cmd := newCLI(bin, dir, tfEnv)
	if err := p.init(ctx, cmd, run, env, tfEnv, bin, dir); err != nil {
		return 0, err
	}
	late := run.Inputs != nil && !p.inputs // the variables come with the job's inputs
	if late && m.Operation == protocol.TerraformPlanApply && p.checker.Len() == 0 {
		pipe, err := newVarsPipe(run.Dir, func() {
			fmt.Fprintln(run.Stdout, "outpost: started terraform apply: it plans once it reads the variables")
		})
		if err == nil {
			p.outputs, err = p.planApply(ctx, cmd, run, pipe)
			return 0, err
		}
		fmt.Fprintf(run.Stdout, "outpost: %v: terraform starts once the variables come\n", err)
	}
	if late {
		if err := p.awaitInputs(ctx, run); err != nil {
			return 0, err
		}
	}
	if err := p.joinSync(); err != nil {
		return 0, err
	}
	if m.plans() {
		if err := writeVariables(dir, m.Variables); err != nil {
			return 0, err
		}
	}

	switch m.Operation {
	case protocol.TerraformPlan:
		p.outputs, err = p.plan(ctx, tf, cmd, run)
	case protocol.TerraformPlanApply:
		if p.checker.Len() > 0 {
			p.outputs, err = p.planCheckApply(ctx, tf, cmd, run)
		} else {
			p.outputs, err = p.planApply(ctx, cmd, run, nil)
		}
	case protocol.TerraformApply:
		err = p.apply(ctx, tf, cmd, run, m.PlanFile)
	case protocol.TerraformOutputs:
		p.outputs, err = outputs(ctx, tf)
	}
	if err != nil {
		return 0, err
	}
	return 0, nil
}

// TakesDeferredInputs: a terraform job queued before its variables are
// known fetches its module and runs init, then waits for them.
func (p *plugin) TakesDeferredInputs() {}

// awaitInputs waits for the job's deferred inputs (protocol.TerraformInputs)
// and takes its variables from them.
func (p *plugin) awaitInputs(ctx context.Context, run plugins.Run) error {
	fmt.Fprintln(run.Stdout, "outpost: waiting for the variables (the step's dependencies are still running)")
	raw, err := run.Inputs(ctx)
	if err != nil {
		return err
	}
	var in protocol.TerraformInputs
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Errorf("the job's inputs: %w", err)
	}
	if err := validateVariables(in.Variables); err != nil {
		return err
	}
	p.m.Variables, p.inputs = in.Variables, true
	p.secrets.Add(in.Scrub...)
	fmt.Fprintln(run.Stdout, "outpost: variables received")
	if s := p.m.ModuleSync; s != nil && s.Destination.Registry.Address == "" {
		if in.Registry == nil || in.Registry.Address == "" {
			return errors.New("the job's inputs: registry: required (module_sync.destination's registry, which the job was queued without)")
		}
		s.Destination.Registry = *in.Registry
		return p.syncModule(ctx, run, p.fetched)
	}
	return nil
}

// writeVariables writes the variables into the module, as a tfvars file
// that sorts after the module's own.
func writeVariables(dir string, vars map[string]json.RawMessage) error {
	b, err := variablesJSON(vars)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, varsFile), b, 0o600)
}

// variablesJSON is the variables as a tfvars JSON file holds them.
func variablesJSON(vars map[string]json.RawMessage) ([]byte, error) {
	if vars == nil {
		vars = map[string]json.RawMessage{}
	}
	b, err := json.Marshal(vars)
	if err != nil {
		return nil, fmt.Errorf("variables: %w", err)
	}
	return b, nil
}

// terraformEnv is terraform's environment: the job's, the manifest's, and
// the plugin's own settings, which win.
func (p *plugin) terraformEnv(jobEnv map[string]string, run plugins.Run) (map[string]string, error) {
	env := make(map[string]string, len(jobEnv)+len(p.m.Env)+4)
	for k, v := range jobEnv {
		if strings.HasPrefix(k, "TF_HTTP_") || len(tfexec.ProhibitedEnv(map[string]string{k: v})) > 0 {
			continue
		}
		env[k] = v
	}
	for k, v := range p.m.Env {
		env[k] = v
	}
	// A CLI configuration that exists: the runner's (--terraform-cli-config),
	// or an empty one, so that a TF_CLI_CONFIG_FILE naming a missing file, or
	// a ~/.terraformrc, never changes what terraform does.
	cfg := jobEnv[envCLIConfig]
	if fi, err := os.Stat(cfg); cfg == "" || err != nil || fi.IsDir() {
		if cfg != "" {
			fmt.Fprintf(run.Stderr, "outpost: %s=%s is not a file: using an empty terraform CLI configuration\n", envCLIConfig, cfg)
		}
		cfg = filepath.Join(run.Dir, cliConfigFile)
		if err := os.WriteFile(cfg, nil, 0o600); err != nil {
			return nil, err
		}
	}
	env[envCLIConfig] = cfg
	env[envCheckpoint] = "1"
	// The backend's settings go in the environment, not in -backend-config
	// (which init writes into the data directory): so the data directory
	// serves every workspace, and the init cache can share it.
	env[envHTTPAddress] = p.m.Backend.Address
	env[envHTTPLock] = p.m.Backend.LockAddress
	env[envHTTPUnlock] = p.m.Backend.UnlockAddress
	env[envHTTPUser] = p.m.Backend.Username
	env[envHTTPPass] = p.m.Backend.Password
	env[envHTTPRetryMax], env[envHTTPRetryWaitMax] = "10", "5"
	return env, nil
}

// init runs terraform init in the module's directory, or, when the runner
// keeps an init cache (EnvInitCache), reuses the init an earlier job made of
// the same module (see initCache). Either way the job's log says
// "outpost: terraform initialised".
func (p *plugin) init(ctx context.Context, cmd cli, run plugins.Run, jobEnv, tfEnv map[string]string, bin, dir string) error {
	args := []string{"init", "-input=false", "-no-color"}
	pluginDir, err := p.vendoredProviders(run, dir)
	if err != nil {
		return err
	}
	if pluginDir != "" {
		args = append(args, "-plugin-dir="+pluginDir)
	}
	runInit := func() error {
		if err := cmd.run(ctx, run.Stdout, run.Stderr, args...); err != nil {
			return failure("init", err)
		}
		return nil
	}
	var (
		age    time.Duration
		reused bool
	)
	if pluginDir != "" {
		// The plugin directory is the job's: an init cache entry would
		// point into it once it is gone.
		err = runInit()
	} else if key := p.initCacheKey(run, jobEnv, tfEnv, bin, dir); key != "" {
		c := initCache{dir: jobEnv[EnvInitCache], now: time.Now}
		age, reused, err = c.initialise(ctx, key, dir, runInit, func(err error) {
			fmt.Fprintf(run.Stderr, "outpost: init cache: %v\n", err)
		})
	} else {
		err = runInit()
	}
	switch {
	case err != nil:
		return err
	case reused:
		fmt.Fprintf(run.Stdout, "outpost: terraform initialised: reused this runner's init of the same module, terraform and CLI configuration (%s old)\n",
			age.Round(time.Second))
	default:
		fmt.Fprintln(run.Stdout, "outpost: terraform initialised")
	}
	return nil
}

// initCacheKey is the job's key in the runner's init cache, or "" when it
// does not use one: the runner keeps none, TF_DATA_DIR moves the data
// directory out of the module's, or the module's archive brought a data
// directory of its own.
func (p *plugin) initCacheKey(run plugins.Run, jobEnv, tfEnv map[string]string, bin, dir string) string {
	if jobEnv[EnvInitCache] == "" || tfEnv["TF_DATA_DIR"] != "" {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(dir, dataDir)); err == nil {
		fmt.Fprintf(run.Stdout, "outpost: the module's archive holds a %s directory: this job runs its own init\n", dataDir)
		return ""
	}
	key, err := initCacheKey(p.m.Module, bin, tfEnv[envCLIConfig], tfEnv)
	if err != nil {
		fmt.Fprintf(run.Stderr, "outpost: init cache: %v\n", err)
		return ""
	}
	return key
}

func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok && name != "" {
			m[name] = value
		}
	}
	return m
}
