package runner

import (
	"crypto/ed25519"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/planpolicy"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/customer"
	"github.com/outpost-dev/outpost/runner/plugins/runnerupdate"
	"github.com/outpost-dev/outpost/runner/plugins/terraform"
	"github.com/outpost-dev/outpost/runner/plugins/terraform/providers"
	"github.com/outpost-dev/outpost/runner/plugins/toolpath"
)

// Version is the runner's version, set at build time with
// -ldflags "-X github.com/outpost-dev/outpost/runner.Version=…".
var Version = "dev"

// Platform is the runner's "<os>_<arch>" as terraform names platforms
// (linux_amd64), reported at registration and with heartbeats: builds
// vendor terraform providers for the platforms of the install runners.
var Platform = providers.Platform

// Defaults of Config.
const (
	DefaultConcurrency     = 4
	DefaultCancelGrace     = 10 * time.Second
	DefaultShutdownTimeout = time.Minute
)

// Config is everything a Runner needs. Zero values take the defaults.
type Config struct {
	// GatewayURL is the control plane's base URL (http or https); the
	// protocol's paths (/runner/v1/…) are appended to it.
	GatewayURL string
	// Token is a registration token (protocol.RegistrationTokenPrefix) or a
	// runner token (protocol.RunnerTokenPrefix). It is never logged.
	Token string
	// TokenFile, when set, holds the runner token: a runner given a
	// registration token uses the token in this file when there is one, and
	// otherwise registers and writes the new runner token there (mode 0600).
	TokenFile string
	// Concurrency is how many jobs run at once (default 4); jobs queued
	// early that wait for their deferred inputs take as many places again,
	// and run in them once their inputs come.
	Concurrency int
	// WorkDir holds the jobs' directories (jobs/<id>-<attempt>/). Default: a
	// temporary directory, removed when Run returns.
	WorkDir string
	// Name is reported at registration (default: the host name).
	Name string
	// CancelGrace is how long a job has between SIGTERM and SIGKILL
	// (default 10s).
	CancelGrace time.Duration
	// ShutdownTimeout is how long Run, once its context ends, lets running
	// jobs finish before it cancels them (default 1m).
	ShutdownTimeout time.Duration
	// Executable is the runner binary that is re-executed for each job as
	// "<Executable> job --dir DIR" (default: os.Executable()).
	Executable string
	// Logger receives the runner's own log (default: text on stderr).
	Logger *slog.Logger
	// Terraform configures terraform jobs: the binary, the CLI
	// configuration, the init cache (kept in <WorkDir>/cache/terraform-init)
	// and the kube assets local sandboxes start a cluster with.
	Terraform terraform.Options
	// Helm configures helm jobs and chart builds.
	Helm HelmOptions
	// PlanPolicies, when set, is the directory of the customer's plan
	// policies (*.rego): jobs check every plan against them before applying
	// it (planpolicy.EnvDir). The runner refuses to start when they do not compile.
	PlanPolicies string
	// CABundle, when set, is a PEM file of CA certificates trusted beyond
	// the system's: by the runner for the gateway, and by jobs (terraform,
	// registries) through SSL_CERT_DIR. Proxies come from the environment
	// (HTTPS_PROXY, NO_PROXY), which jobs get too.
	CABundle string
	// HealthAddr, when set, is the TCP address (host:port, e.g. ":8081")
	// where the runner answers liveness probes on HealthPath while it runs.
	HealthAddr string
	// Deployment, when set (NAMESPACE/NAME), is the Kubernetes Deployment
	// the runner runs in (the Helm chart sets it): a self-update then rolls
	// its image instead of replacing the binary (helmupdate.go).
	Deployment string
	// AutoUpdate: the customer lets the runner switch to a new release on
	// its own (still only to one whose signature verifies). Without it an
	// update runs only to AcceptUpdate, the version the customer accepted.
	AutoUpdate   bool
	AcceptUpdate string
	// ReleaseKeys, when set (base64 ed25519 public keys, comma-separated),
	// replaces the release keys built into the runner (ReleaseKeys).
	ReleaseKeys string
	// JobUsers, when set ("UID", "FIRST-LAST", either with ":GID"), runs
	// jobs under those uids instead of the runner's (jobuser.go).
	JobUsers string
	// Policy is the customer's policy (package customer): debug commands
	// are off unless it allows them. Its Concurrency is Concurrency.
	Policy customer.Policy
	// StateDir keeps the customer's pause, consents and history (default:
	// $OUTPOST_STATE_DIR, else <WorkDir>/state when WorkDir is set, else
	// customer.DefaultDir()). HistoryRetention: customer.DefaultRetention.
	StateDir         string
	HistoryRetention time.Duration
	// Paused pauses the runner from its start (the chart's paused value),
	// whatever the state directory says.
	Paused bool

	// releaseKeys: ReleaseKeys parsed, or the built-in ones.
	releaseKeys []ed25519.PublicKey
	// jobUsers: JobUsers parsed (nil: jobs run as the runner's user).
	jobUsers *jobUsers
	// caPool: the system's roots and CABundle's (set by withDefaults).
	caPool *x509.CertPool
	// jobExecutables run the jobs of some types instead of Executable, as
	// "<exe> job --dir DIR" (set by withDefaults from Helm).
	jobExecutables map[string]string
}

// HelmOptions configure helm jobs and chart builds (HelmJobTypes).
type HelmOptions struct {
	// JobBinary runs them, as "<JobBinary> job --dir DIR". Default: HelmJobBinary next to
	// Config.Executable, then on PATH; without one the runner does not offer them.
	JobBinary string
}

// withDefaults checks cfg and fills in its defaults. Its errors name the
// setting and never quote a token.
func (cfg Config) withDefaults() (Config, error) {
	u, err := url.Parse(cfg.GatewayURL)
	switch {
	case cfg.GatewayURL == "":
		return cfg, errors.New("gateway URL: required")
	case err != nil:
		return cfg, fmt.Errorf("gateway URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return cfg, fmt.Errorf("gateway URL %q: must start with http:// or https://", cfg.GatewayURL)
	case u.Host == "":
		return cfg, fmt.Errorf("gateway URL %q: has no host", cfg.GatewayURL)
	}
	cfg.GatewayURL = strings.TrimSuffix(cfg.GatewayURL, "/")

	switch {
	case cfg.Token == "" && cfg.TokenFile == "":
		return cfg, errors.New("token: required (a registration token or a runner token, or a token file)")
	case cfg.Token != "" && !strings.HasPrefix(cfg.Token, protocol.RegistrationTokenPrefix) &&
		!strings.HasPrefix(cfg.Token, protocol.RunnerTokenPrefix):
		return cfg, fmt.Errorf("token: must start with %s (registration token) or %s (runner token)",
			protocol.RegistrationTokenPrefix, protocol.RunnerTokenPrefix)
	}

	switch {
	case cfg.Concurrency < 0:
		return cfg, fmt.Errorf("concurrency: must be at least 1, got %d", cfg.Concurrency)
	case cfg.Concurrency == 0:
		cfg.Concurrency = DefaultConcurrency
	}
	switch {
	case cfg.CancelGrace < 0:
		return cfg, fmt.Errorf("cancel grace: must not be negative, got %s", cfg.CancelGrace)
	case cfg.CancelGrace == 0:
		cfg.CancelGrace = DefaultCancelGrace
	}
	switch {
	case cfg.ShutdownTimeout < 0:
		return cfg, fmt.Errorf("shutdown timeout: must not be negative, got %s", cfg.ShutdownTimeout)
	case cfg.ShutdownTimeout == 0:
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}

	if cfg.HealthAddr != "" {
		if _, _, err := net.SplitHostPort(cfg.HealthAddr); err != nil {
			return cfg, fmt.Errorf("health address %q: must be host:port or :port: %w", cfg.HealthAddr, err)
		}
	}

	if ns, name, ok := strings.Cut(cfg.Deployment, "/"); cfg.Deployment != "" && (!ok || ns == "" || name == "" || strings.Contains(name, "/")) {
		return cfg, fmt.Errorf("deployment %q: must be NAMESPACE/NAME", cfg.Deployment)
	}

	keys := ReleaseKeys
	if cfg.ReleaseKeys != "" {
		keys = cfg.ReleaseKeys
	}
	if cfg.releaseKeys, err = ParseReleaseKeys(keys); err != nil {
		return cfg, err
	}
	if cfg.JobUsers != "" {
		if cfg.jobUsers, err = parseJobUsers(cfg.JobUsers); err != nil {
			return cfg, err
		}
		// Jobs of different uids would share the init cache: one could
		// plant a provider another runs.
		cfg.Terraform.NoInitCache = cfg.Terraform.NoInitCache || cfg.jobUsers.isRange()
	}

	if cfg.CABundle != "" {
		if cfg.CABundle, err = filepath.Abs(cfg.CABundle); err == nil {
			cfg.caPool, err = loadCABundle(cfg.CABundle)
		}
		if err != nil {
			return cfg, err
		}
	}

	if cfg.PlanPolicies != "" {
		if cfg.PlanPolicies, err = checkPlanPolicies(cfg.PlanPolicies); err != nil {
			return cfg, err
		}
	}

	if cfg.WorkDir != "" {
		// Jobs run in their own directory, so the path they get must not
		// depend on the working directory.
		if cfg.WorkDir, err = filepath.Abs(cfg.WorkDir); err != nil {
			return cfg, fmt.Errorf("work dir: %w", err)
		}
	}
	if err := cfg.Policy.Check(); err != nil {
		return cfg, err
	}
	cfg.StateDir = StateDir(cfg.StateDir, cfg.WorkDir)
	if cfg.Name == "" {
		cfg.Name, _ = os.Hostname()
	}
	if cfg.Executable == "" {
		if cfg.Executable, err = os.Executable(); err != nil {
			return cfg, fmt.Errorf("finding the runner executable: %w", err)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if err := cfg.findJobExecutables(); err != nil {
		return cfg, err
	}
	cwd, _ := os.Getwd()
	var missing error
	if cfg.Terraform, missing, err = cfg.Terraform.Resolve(os.Getenv("PATH"), cwd); err != nil {
		return cfg, err
	} else if missing != nil {
		cfg.Logger.Warn("no terraform binary found: terraform jobs will fail", "err", missing)
	}
	return cfg, nil
}

// StateDir is the customer's state directory of a runner given stateDir
// and workDir (either may be empty): Config.StateDir.
func StateDir(stateDir, workDir string) string {
	switch {
	case stateDir != "":
	case os.Getenv("OUTPOST_STATE_DIR") != "":
		stateDir = os.Getenv("OUTPOST_STATE_DIR")
	case workDir != "":
		stateDir = filepath.Join(workDir, "state")
	default:
		stateDir = customer.DefaultDir()
	}
	if abs, err := filepath.Abs(stateDir); err == nil {
		return abs
	}
	return stateDir
}

// HelmJobBinary is the binary that runs the job types whose libraries are
// heavy to initialise (HelmJobTypes): helm jobs, chart builds, image builds.
const HelmJobBinary = "outpost-runner-helm"

// HelmJobTypes are the job types HelmJobBinary runs.
var HelmJobTypes = []string{protocol.JobTypeHelm, protocol.JobTypeHelmChart, protocol.JobTypeDockerImage,
	protocol.JobTypeSupport, protocol.JobTypeKubeLogs}

// findJobExecutables checks the configured helm job binary, or finds one.
func (cfg *Config) findJobExecutables() error {
	helmBin := cfg.Helm.JobBinary
	if helmBin != "" {
		abs, err := filepath.Abs(helmBin)
		if err == nil {
			err = toolpath.Executable(abs)
		}
		if err != nil {
			return fmt.Errorf("the executable of helm jobs (%s): %w", helmBin, err)
		}
		helmBin = abs
	}
	if next := filepath.Join(filepath.Dir(cfg.Executable), HelmJobBinary); helmBin == "" && toolpath.Executable(next) == nil {
		helmBin = next
	}
	if p, err := exec.LookPath(HelmJobBinary); helmBin == "" && err == nil {
		helmBin = p
	}
	cfg.jobExecutables = map[string]string{}
	for _, typ := range HelmJobTypes {
		if helmBin == "" {
			cfg.Logger.Info("no " + HelmJobBinary + " next to the runner or on PATH: this runner does not run " + typ + " jobs")
			continue
		}
		cfg.jobExecutables[typ] = helmBin
	}
	return nil
}

// jobEnv is what the configuration adds to every job's clean environment.
func (cfg Config) jobEnv(workDir string) ([]string, error) {
	net, err := cfg.networkEnv(workDir)
	if err != nil {
		return nil, err
	}
	env := append(cfg.Terraform.Env(filepath.Join(workDir, "cache", "terraform-init")), net...)
	if cfg.PlanPolicies != "" {
		env = append(env, planpolicy.EnvDir+"="+cfg.PlanPolicies)
	}
	if cfg.Deployment != "" { // a runner_update job then stages no binary
		env = append(env, runnerupdate.EnvDeployment+"="+cfg.Deployment)
	}
	return env, nil
}

// Intervals the runner falls back on when the gateway leaves one out.
var defaultIntervals = protocol.Intervals{
	ClaimWaitMS:       50_000,
	JobHeartbeatMS:    10_000,
	LeaseMS:           60_000,
	RunnerHeartbeatMS: 30_000,
	LogBatchMS:        250,
}

// withDefaults fills the intervals the gateway left out (or sent as zero).
func withDefaults(iv protocol.Intervals) protocol.Intervals {
	fill := func(v *int64, def int64) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&iv.ClaimWaitMS, defaultIntervals.ClaimWaitMS)
	fill(&iv.JobHeartbeatMS, defaultIntervals.JobHeartbeatMS)
	fill(&iv.LeaseMS, defaultIntervals.LeaseMS)
	fill(&iv.RunnerHeartbeatMS, defaultIntervals.RunnerHeartbeatMS)
	fill(&iv.LogBatchMS, defaultIntervals.LogBatchMS)
	return iv
}

// fenceAfter is how long a job may go without a lease renewal before the
// runner kills it: the lease minus one heartbeat interval, so that the job is
// gone before the lease runs out and another attempt may start.
func fenceAfter(iv protocol.Intervals) time.Duration {
	if d := iv.Lease() - iv.JobHeartbeat(); d > 0 {
		return d
	}
	return iv.Lease() / 2
}

// checkPlanPolicies makes dir absolute (jobs run elsewhere) and checks that
// its policies compile, so that a mistake shows when the runner starts, not
// as every plan failing.
func checkPlanPolicies(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("plan policies: %w", err)
	}
	mods, err := planpolicy.ReadDir(abs)
	if err == nil {
		err = planpolicy.Parse(mods)
	}
	if err != nil {
		return "", fmt.Errorf("plan policies %s: %w", abs, err)
	}
	return abs, nil
}
