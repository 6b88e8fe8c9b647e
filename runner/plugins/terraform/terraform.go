package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// Files of a job, in its directory.
const (
	moduleDir       = "module"                                  // the extracted module; terraform's working directory
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
	syncing chan error         // the sync started by fetchModule, until joinSync
	inputs  bool               // the job's deferred inputs were taken
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (p *plugin) Validate(manifest json.RawMessage) error {
	if err := plugins.DecodeManifest(manifest, &p.m); err != nil {
		return err
	}
	m := &p.m
	switch m.Operation {
	case protocol.TerraformPlan, protocol.TerraformApply, protocol.TerraformOutputs, protocol.TerraformPlanApply:
	case "":
		return errors.New("operation: required (plan, apply, plan_apply or outputs)")
	default:
		return fmt.Errorf("operation: must be plan, apply, plan_apply or outputs, got %q", m.Operation)
	}
	switch {
	case m.Destroy && !m.plans():
		return errors.New("destroy: only a plan (or plan_apply) can be a destroy plan (an apply applies the plan it is given)")
	case m.Workspace == "":
		return errors.New("workspace: required")
	case m.ModuleSync != nil && m.Operation != protocol.TerraformPlanApply:
		return fmt.Errorf("module_sync: only a plan_apply job syncs its module, not a %s", m.Operation)
	case m.ModuleSync != nil && (len(m.Module) > 0 || m.ModuleArtifact != nil):
		return errors.New("module_sync: give the module, module_artifact or module_sync, not two of them")
	case m.ModuleSync != nil && !validRef(m.ModuleSync.Source):
		return errors.New("module_sync.source: needs registry.address, repository and a sha256 digest")
	case m.ModuleSync != nil && m.ModuleSync.Destination.Repository == "":
		return errors.New("module_sync.destination.repository: required")
	case m.ModuleSync == nil && len(m.Module) == 0 && m.ModuleArtifact == nil:
		return errors.New("module: required (the module directory as a gzipped tar archive), or module_artifact or module_sync")
	case len(m.Module) > 0 && m.ModuleArtifact != nil:
		return errors.New("module_artifact: give the module or module_artifact, not both")
	case m.ModuleArtifact != nil && !validRef(*m.ModuleArtifact):
		return errors.New("module_artifact: needs registry.address, repository and a sha256 digest")
	case m.Operation == protocol.TerraformApply && len(m.PlanFile) == 0:
		return errors.New("plan_file: required for an apply (the saved plan to apply)")
	case m.Operation != protocol.TerraformApply && len(m.PlanFile) > 0:
		return fmt.Errorf("plan_file: only an apply takes a plan file, not a %s", m.Operation)
	}
	if err := validateBackend(m.Backend); err != nil {
		return err
	}
	if err := validateVariables(m.Variables); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(m.Env)) {
		switch {
		case !envName.MatchString(name):
			return fmt.Errorf("env.%s: not a valid environment variable name", name)
		case len(tfexec.ProhibitedEnv(map[string]string{name: ""})) > 0:
			return fmt.Errorf("env.%s: terraform-exec sets this itself; variables go in variables", name)
		case strings.HasPrefix(name, "TF_HTTP_") || name == envCLIConfig:
			return fmt.Errorf("env.%s: the runner sets this itself (the state backend and the CLI configuration are its)", name)
		}
	}
	return nil
}

// validRef: an artifact reference names a registry, a repository and a
// sha256 digest.
func validRef(r protocol.ArtifactRef) bool {
	return r.Registry.Address != "" && r.Repository != "" && strings.HasPrefix(r.Digest, "sha256:")
}

func validateBackend(b protocol.TerraformBackend) error {
	for _, f := range []struct{ name, value string }{
		{"backend.address", b.Address}, {"backend.lock_address", b.LockAddress}, {"backend.unlock_address", b.UnlockAddress},
	} {
		u, err := url.Parse(f.value)
		switch {
		case f.value == "":
			return fmt.Errorf("%s: required", f.name)
		case err != nil:
			return fmt.Errorf("%s: %w", f.name, err)
		case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return fmt.Errorf("%s: must be an http(s) URL, got %q", f.name, f.value)
		case u.User != nil:
			return fmt.Errorf("%s: must not hold a user or password (they are backend.username and backend.password)", f.name)
		}
	}
	if b.Password == "" {
		return errors.New("backend.password: required (the job's state credential)")
	}
	return nil
}

// Execute runs the operation. A terraform failure is an error carrying
// terraform's diagnostics. When ctx ends (the job is cancelled),
// terraform-exec interrupts terraform, which stops gracefully and releases
// its lock.
func (p *plugin) Execute(ctx context.Context, run plugins.Run) (int, error) {
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
	if late && m.Operation == protocol.TerraformPlanApply {
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
		p.outputs, err = plan(ctx, tf, cmd, run, m.Destroy)
	case protocol.TerraformPlanApply:
		p.outputs, err = p.planApply(ctx, cmd, run, nil)
	case protocol.TerraformApply:
		err = apply(ctx, tf, run, m.PlanFile)
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

// fetchModule fetches the module archive when the manifest does not carry
// it: from the install's registry (module_artifact), or, for a module_sync,
// from the build's source, checked against its digest. A module_sync whose
// destination is known copies the build there meanwhile (joinSync waits for
// that copy: it is done before terraform plans); one whose destination
// comes with the job's inputs copies it once they come (awaitInputs). When
// the source cannot be read, the install's registry may hold the build
// already: the module is fetched from there once the copy (which then finds
// it there) is done, and for a destination still to come, it is left out
// (Execute then fetches it once the job has its inputs).
func (p *plugin) fetchModule(ctx context.Context, run plugins.Run) error {
	m := &p.m
	s := m.ModuleSync
	switch {
	case s == nil && m.ModuleArtifact == nil:
		return nil
	case s == nil:
		return p.fetch(ctx, run, *m.ModuleArtifact, "module_artifact")
	case s.Destination.Registry.Address != "":
		p.syncing = make(chan error, 1)
		go func() { p.syncing <- p.syncModule(ctx, run, nil) }()
		if err := p.fetch(ctx, run, s.Source, "module_sync.source"); err != nil {
			fmt.Fprintf(run.Stdout, "outpost: %v: it is fetched from the install's registry\n", err)
			if err := p.joinSync(); err != nil {
				return err
			}
			return p.fetchSynced(ctx, run)
		}
		return nil
	case run.Inputs == nil:
		return errors.New("module_sync.destination.registry.address: required (it comes with the job's inputs only when they are deferred)")
	}
	if err := p.fetch(ctx, run, s.Source, "module_sync.source"); err != nil {
		fmt.Fprintf(run.Stdout, "outpost: %v: it is fetched from the install's registry once the job has its inputs\n", err)
		m.Module = nil
	}
	return nil
}

// joinSync waits for the sync fetchModule started, if any, and gives its
// error.
func (p *plugin) joinSync() error {
	if p.syncing == nil {
		return nil
	}
	err := <-p.syncing
	p.syncing = nil
	return err
}

// fetchSynced fetches the module from the install's registry, after
// syncModule.
func (p *plugin) fetchSynced(ctx context.Context, run plugins.Run) error {
	d := p.m.ModuleSync.Destination
	return p.fetch(ctx, run, protocol.ArtifactRef{Registry: d.Registry, Repository: d.Repository, Digest: p.synced.Digest}, "module_sync")
}

// fetch fetches the module archive of the terraform-module artifact ref
// names; field names it in errors.
func (p *plugin) fetch(ctx context.Context, run plugins.Run, ref protocol.ArtifactRef, field string) error {
	fmt.Fprintf(run.Stdout, "outpost: fetching the module %s/%s@%s\n", ref.Registry.Address, ref.Repository, ref.Digest)
	var err error
	if p.m.Module, p.fetched, err = ociclient.FetchTerraformModule(ctx, ref); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// syncModule copies the step's build into the install's registry, as an
// oci sync job does, and checks that what was synced is the build. got is what
// the job fetched of the build already (nil when the fetch runs meanwhile):
// copied from memory, it is not read from the vendor's registry again.
func (p *plugin) syncModule(ctx context.Context, run plugins.Run, got *ociclient.Fetched) error {
	s := p.m.ModuleSync
	scrub := ociclient.NewScrubber(s.Source.Registry.Username, s.Source.Registry.Password,
		s.Destination.Registry.Username, s.Destination.Registry.Password)
	dst, err := ociclient.NewTarget(s.Destination)
	if err != nil {
		return scrub.Error(fmt.Errorf("module_sync.destination: %w", err))
	}
	art, err := ociclient.Sync(ctx, scrub.Writer(run.Stdout), s.Source, dst, got)
	switch {
	case err != nil:
		return scrub.Error(fmt.Errorf("module_sync: %w", err))
	case art.Digest != s.Source.Digest:
		return fmt.Errorf("module_sync: %s holds %s, the build is %s", dst.Name, art.Digest, s.Source.Digest)
	}
	fmt.Fprintf(run.Stdout, "outpost: synced: %s holds %s\n", dst.Name, art.Digest)
	p.synced = &art
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

// validateVariables checks the variables' names.
func validateVariables(vars map[string]json.RawMessage) error {
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if !identifier.MatchString(name) {
			return fmt.Errorf("variables.%s: not a valid terraform variable name", name)
		}
	}
	return nil
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
	runInit := func() error {
		if err := cmd.run(ctx, run.Stdout, run.Stderr, "init", "-input=false", "-no-color"); err != nil {
			return failure("init", err)
		}
		return nil
	}
	var (
		age    time.Duration
		reused bool
		err    error
	)
	if key := p.initCacheKey(run, jobEnv, tfEnv, bin, dir); key != "" {
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

// plan saves a plan (a destroy plan when asked) and describes it: the text
// terraform showed, its JSON with sensitive values redacted, and the counts.
func plan(ctx context.Context, tf *tfexec.Terraform, cmd cli, run plugins.Run, destroy bool) (json.RawMessage, error) {
	out, path, err := savePlan(ctx, tf, run, destroy)
	if err != nil {
		return nil, err
	}
	if err := describe(ctx, cmd, path, &out); err != nil {
		return nil, err
	}
	if out.PlanFile, err = os.ReadFile(path); err != nil {
		return nil, err
	}
	reportPlan(run, out)
	return fitPlanOutputs(out)
}

// planApply plans and applies in one terraform process, "apply
// -auto-approve": under approve-all nobody approves the plan, so saving it
// first and applying that file would only cost a terraform process (and a
// state lock, read and unlock) more. It records the plan as apply printed it
// before applying, and terraform's counts from its "Plan:" line; the plan's
// JSON is left to plan jobs, whose plans a person reviews. A plan without
// changes changes no resource, but terraform still stores the state it
// refreshed when that differs from the stored one (drift, a check block's
// result), where a saved plan without changes was never applied.
//
// With a pipe, the variables are still to come (deferred inputs): terraform
// starts at once and reads them from the pipe, which giveVariables fills
// once the job has its inputs.
func (p *plugin) planApply(ctx context.Context, cmd cli, run plugins.Run, pipe *varsPipe) (json.RawMessage, error) {
	args := []string{"apply", "-no-color", "-input=false", "-auto-approve"}
	if p.m.Destroy {
		args = append(args, "-destroy")
	}
	if pipe != nil {
		args = append(args, "-var-file="+pipe.path)
	}
	// The plan comes first; what apply prints after it (a provisioner's
	// output, say) is only kept up to a bound.
	printed := &capped{max: 2 * protocol.MaxOutputsBytes}
	proc, err := cmd.start(ctx, io.MultiWriter(run.Stdout, printed), run.Stderr, args...)
	if err != nil {
		if pipe != nil {
			pipe.release()
		}
		return nil, failure("apply", err)
	}
	if pipe != nil {
		if err := p.giveVariables(ctx, run, proc, pipe); err != nil {
			return nil, err
		}
	}
	if err := proc.wait(); err != nil {
		return nil, failure("apply", err)
	}
	text := appliedPlanText(printed.String())
	out := protocol.TerraformPlanOutputs{HasChanges: !noChanges.MatchString(text), PlanText: text}
	out.Add, out.Change, out.Destroy = countsFromText(text)
	fmt.Fprintf(run.Stdout, "outpost: plan applied: %d to add, %d to change, %d to destroy (changes: %v)\n",
		out.Add, out.Change, out.Destroy, out.HasChanges)
	return fitPlanApplyOutputs(out, out.HasChanges, p.synced)
}

// giveVariables waits for the job's inputs (and syncs the module when they
// bring its registry), then writes the variables to the pipe terraform
// reads them from. When the inputs do not come (the job is cancelled, the
// runner gives up), terraform is killed: blocked reading the pipe, it has
// taken no lock and written no state. When terraform ends first (it failed
// before reading them), the wait ends with it, and terraform's own error is
// the job's (a nil error here: apply's wait reports it).
func (p *plugin) giveVariables(ctx context.Context, run plugins.Run, proc *process, pipe *varsPipe) error {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-proc.done:
			stop()
		case <-wctx.Done():
		}
	}()
	var b []byte
	err := errors.Join(p.awaitInputs(wctx, run), p.joinSync())
	if err == nil {
		b, err = variablesJSON(p.m.Variables)
	}
	if err != nil {
		if exited(proc) {
			err = nil // terraform's own error says why
		} else {
			proc.kill()
		}
		pipe.release()
		return err
	}
	if err := pipe.give(b, proc.done); err != nil && !errors.Is(err, errNotRead) && !exited(proc) {
		proc.kill()
		return err
	}
	return nil // when terraform ended without reading them, its own error says why
}

// exited says the process has ended.
func exited(p *process) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// capped keeps the first max bytes written to it and drops the rest.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

var (
	// noChanges starts terraform's text for a plan without changes ("No
	// changes. Your infrastructure matches the configuration.").
	noChanges = regexp.MustCompile(`(?m)^No changes\.`)
	// planStart: the lines a plan's text starts with. What terraform prints
	// before (acquiring the state lock, refreshing, reading data sources,
	// preparing imports, opening ephemeral resources, warnings) is not the
	// plan, and its lines are too varied to skip one by one.
	planStart = regexp.MustCompile(`^(Terraform used the selected providers|Terraform will perform the following actions|No changes\.|Changes to Outputs:|Note: Objects have changed outside of Terraform)`)
	// afterPlan: what "apply -auto-approve" prints once the plan is shown
	// (an action on a resource or its provisioner's output, the summary).
	afterPlan = regexp.MustCompile(`^(\S.*: (Creating|Modifying|Destroying|Replacing|Importing|Opening|Closing|Renewing|Still |Creation complete|Modifications complete|Destruction complete|Import complete|Provisioning with)|\S+ \([a-z-]+-exec\): |Apply complete!|Destroy complete!)`)
)

// appliedPlanText is the plan "apply -auto-approve" printed: from the plan's
// first line to the first line of applying it (everything before its first
// action when terraform printed no plan header it knows).
func appliedPlanText(printed string) string {
	lines := strings.SplitAfter(printed, "\n")
	first := slices.IndexFunc(lines, func(l string) bool { return planStart.MatchString(l) })
	if first < 0 {
		first = 0
	}
	last := first
	for last < len(lines) && !afterPlan.MatchString(lines[last]) {
		last++
	}
	return strings.TrimRight(strings.Join(lines[first:last], ""), "\n") + "\n"
}

// Terraform's summary line, "Plan: 1 to add, 0 to change, 0 to destroy."
// (with "N to import, " first when importing).
var (
	planLine    = regexp.MustCompile(`(?m)^Plan: .*$`)
	planAdd     = regexp.MustCompile(`(\d+) to add`)
	planChange  = regexp.MustCompile(`(\d+) to change`)
	planDestroy = regexp.MustCompile(`(\d+) to destroy`)
)

// countsFromText reads the counts of terraform's "Plan: …" line; a plan
// without one (no changes, or changes to outputs only) counts none.
func countsFromText(text string) (add, change, destroy int) {
	line := planLine.FindString(text)
	count := func(re *regexp.Regexp) int {
		n := 0
		if m := re.FindStringSubmatch(line); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return n
	}
	return count(planAdd), count(planChange), count(planDestroy)
}

// savePlan runs terraform plan -out, keeping the plan's text as terraform
// prints it (it goes to the job's logs as well).
func savePlan(ctx context.Context, tf *tfexec.Terraform, run plugins.Run, destroy bool) (protocol.TerraformPlanOutputs, string, error) {
	path := filepath.Join(run.Dir, planFileName)
	var text bytes.Buffer
	tf.SetStdout(io.MultiWriter(run.Stdout, &text))
	changes, err := tf.Plan(ctx, tfexec.Out(path), tfexec.Destroy(destroy))
	tf.SetStdout(run.Stdout)
	if err != nil {
		return protocol.TerraformPlanOutputs{}, "", failure("plan", err)
	}
	return protocol.TerraformPlanOutputs{HasChanges: changes, PlanText: planText(text.String())}, path, nil
}

// planText is the plan as terraform printed it, without the refresh lines
// before it and the advice on applying the saved plan after it.
func planText(printed string) string {
	lines := strings.SplitAfter(printed, "\n")
	first := 0
	for first < len(lines) && (strings.Contains(lines[first], ": Refreshing state...") || strings.TrimSpace(lines[first]) == "") {
		first++
	}
	out := strings.Join(lines[first:], "")
	if i := strings.Index(out, "\nSaved the plan to: "); i >= 0 {
		out = out[:i]
	}
	return strings.TrimRight(strings.TrimRight(strings.TrimRight(out, "\n"), "─"), "\n") + "\n"
}

func reportPlan(run plugins.Run, out protocol.TerraformPlanOutputs) {
	fmt.Fprintf(run.Stdout, "outpost: plan saved: %d to add, %d to change, %d to destroy (changes: %v)\n",
		out.Add, out.Change, out.Destroy, out.HasChanges)
}

// cli runs terraform commands without terraform-exec, in the module's
// directory with terraform's environment.
type cli struct {
	bin, dir string
	env      []string
}

func newCLI(bin, dir string, env map[string]string) cli {
	c := cli{bin: bin, dir: dir}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		c.env = append(c.env, k+"="+env[k])
	}
	// As terraform-exec runs terraform: not interactive, no log output
	// mixed into what the job shows.
	c.env = append(c.env, "TF_IN_AUTOMATION=1", "TF_INPUT=0", "TF_LOG=", "TF_LOG_CORE=", "TF_LOG_PATH=", "TF_LOG_PROVIDER=")
	return c
}

// run runs terraform with args. Its error reads like terraform-exec's,
// "<how it ended>\n<what it wrote to stderr>", for failure(). When ctx ends
// terraform is interrupted, as terraform-exec does, so it stops gracefully.
func (c cli) run(ctx context.Context, stdout, stderr io.Writer, args ...string) error {
	p, err := c.start(ctx, stdout, stderr, args...)
	if err != nil {
		return err
	}
	return p.wait()
}

// process is a terraform process that cli.start started.
type process struct {
	cmd  *exec.Cmd
	errs bytes.Buffer  // what it wrote to stderr
	done chan struct{} // closed once it ended and its output is copied
	err  error         // how it ended, once done is closed
}

// start starts terraform with args, as run does, without waiting for it.
func (c cli) start(ctx context.Context, stdout, stderr io.Writer, args ...string) (*process, error) {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	p := &process{cmd: cmd, done: make(chan struct{})}
	cmd.Dir, cmd.Env, cmd.Stdout = c.dir, c.env, stdout
	cmd.Stderr = &p.errs
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, &p.errs)
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = interruptGrace
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// wait waits for the process to end; its error is run's.
func (p *process) wait() error {
	<-p.done
	if p.err != nil {
		return fmt.Errorf("%w\n%s", p.err, p.errs.String())
	}
	return nil
}

// kill ends the process at once and waits for it.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// interruptGrace is how long terraform has to stop after an interrupt.
const interruptGrace = 30 * time.Second

// describe fills in the plan's JSON (sensitive values redacted) and counts
// from "terraform show -json".
func describe(ctx context.Context, cmd cli, planFile string, out *protocol.TerraformPlanOutputs) error {
	var stdout bytes.Buffer
	if err := cmd.run(ctx, &stdout, nil, "show", "-json", "-no-color", planFile); err != nil {
		return failure("show -json", err)
	}
	planJSON, err := redactPlanJSON(stdout.Bytes())
	if err != nil {
		return err
	}
	add, change, del, err := countChanges(stdout.Bytes())
	if err != nil {
		return err
	}
	out.PlanJSON, out.Add, out.Change, out.Destroy = planJSON, add, change, del
	return nil
}

// countChanges counts the managed resources the plan adds, changes and
// destroys, as terraform's "Plan: …" line does (a replacement is one add and
// one destroy).
func countChanges(planJSON []byte) (add, change, destroy int, err error) {
	var p struct {
		ResourceChanges []struct {
			Mode   string `json:"mode"`
			Change struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(planJSON, &p); err != nil {
		return 0, 0, 0, fmt.Errorf("reading the plan's JSON: %w", err)
	}
	for _, rc := range p.ResourceChanges {
		if rc.Mode != "managed" {
			continue
		}
		a := rc.Change.Actions
		if slices.Contains(a, "create") {
			add++
		}
		if slices.Contains(a, "delete") {
			destroy++
		}
		if slices.Contains(a, "update") {
			change++
		}
	}
	return add, change, destroy, nil
}

// fitPlanOutputs keeps a plan job's outputs under the size a job's outputs
// may have (see fitPlan).
func fitPlanOutputs(out protocol.TerraformPlanOutputs) (json.RawMessage, error) {
	return fitPlan(&out, func() ([]byte, error) { return json.Marshal(out) })
}

// fitPlanApplyOutputs is fitPlanOutputs for a plan_apply job, whose plan
// file, applied already, is not kept.
func fitPlanApplyOutputs(plan protocol.TerraformPlanOutputs, applied bool, synced *protocol.Artifact) (json.RawMessage, error) {
	out := protocol.TerraformPlanApplyOutputs{Applied: applied, Synced: synced}
	return fitPlan(&plan, func() ([]byte, error) { out.Plan = plan; return json.Marshal(out) })
}

// fitPlan cuts a plan until encode gives no more than a job's outputs may
// hold: the JSON goes first, then the text is cut (the plan file, which the
// apply needs, is never cut). Truncated says so.
func fitPlan(out *protocol.TerraformPlanOutputs, encode func() ([]byte, error)) (json.RawMessage, error) {
	b, err := encode()
	if err != nil || len(b) <= protocol.MaxOutputsBytes {
		return b, err
	}
	out.PlanJSON, out.Truncated = nil, true
	if b, err = encode(); err != nil || len(b) <= protocol.MaxOutputsBytes {
		return b, err
	}
	over := len(b) - protocol.MaxOutputsBytes + 200
	if over >= len(out.PlanText) {
		out.PlanText = ""
	} else {
		keep := len(out.PlanText) - over
		for keep > 0 && !utf8.RuneStart(out.PlanText[keep]) {
			keep--
		}
		out.PlanText = out.PlanText[:keep] + "\n… (cut: the plan is too large for the job's outputs; the logs have it whole)\n"
	}
	if b, err = encode(); err != nil || len(b) <= protocol.MaxOutputsBytes {
		return b, err
	}
	return nil, fmt.Errorf("the saved plan is %d bytes: more than a job's outputs may hold (%d)", len(out.PlanFile), protocol.MaxOutputsBytes)
}

// apply applies exactly the saved plan. Its outputs are in the state it
// stored, where the control plane reads them.
func apply(ctx context.Context, tf *tfexec.Terraform, run plugins.Run, planFile []byte) error {
	path := filepath.Join(run.Dir, planFileName)
	if err := os.WriteFile(path, planFile, 0o600); err != nil {
		return err
	}
	if err := tf.Apply(ctx, tfexec.DirOrPlan(path)); err != nil {
		return failure("apply", err)
	}
	return nil
}

// outputs reads the module's outputs; their values stay out of the logs.
func outputs(ctx context.Context, tf *tfexec.Terraform) (json.RawMessage, error) {
	tf.SetStdout(nil)
	metas, err := tf.Output(ctx)
	if err != nil {
		return nil, failure("output", err)
	}
	out := protocol.TerraformApplyOutputs{Outputs: make(map[string]protocol.TerraformOutput, len(metas))}
	for name, m := range metas {
		out.Outputs[name] = protocol.TerraformOutput{Value: m.Value, Sensitive: m.Sensitive}
	}
	return json.Marshal(out)
}

func (p *plugin) Outputs() (json.RawMessage, error) { return p.outputs, nil }

// Cleanup kills what terraform's provisioners left running (see
// adoptOrphans). The runner removes the job's directory, and with it the
// module, the plan and terraform's data directory.
func (p *plugin) Cleanup() error {
	if n := killLeftovers(); n > 0 && p.stderr != nil {
		fmt.Fprintf(p.stderr, "outpost: killed %d process(es) terraform left running\n", n)
	}
	return nil
}
