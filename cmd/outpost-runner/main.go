// Command outpost-runner is the Outpost runner: it lives in a customer's
// account, polls the control plane's gateway for jobs over outbound HTTPS and
// runs each job as a process of its own. The logic is in package runner.
//
//	outpost-runner run --gateway-url URL --token T [flags]   run the runner
//	outpost-runner job --dir DIR                        run one job (internal)
//	outpost-runner pause|resume|consent|history|update   the customer's side (customer.go, update.go)
//	outpost-runner offline verify BUNDLE --release-key KEY   check a release bundle (offline.go)
//	outpost-runner offline deploy BUNDLE --install-file F …  deploy it with no network (runs outpost-runner-helm)
//	outpost-runner version
//
// Helm jobs run in outpost-runner-helm (see there), found next to this
// binary, then on PATH, or named with --helm-job-bin.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/runner"
)

const usage = `Usage:
  outpost-runner run --gateway-url URL --token TOKEN [flags]
      Claim and run jobs. Every flag can also be set in the environment
      (OUTPOST_GATEWAY_URL, OUTPOST_TOKEN, …); prefer that, or --token-file, to
      putting a token on the command line.
  outpost-runner job --dir DIR
      Run the job in DIR (internal: the runner starts one per job).
  outpost-runner pause [--reason TEXT] | resume
      Pause the runner (it claims nothing; running jobs finish) or resume it.
  outpost-runner consent [deprovision|teardown_component [--for 1h] | --withdraw KIND]
      Consent to a deprovision or a teardown (a runner run with --destroy consent).
  outpost-runner history [--since 24h] [-o table|json]
      The jobs this runner ran, from its state directory.
  outpost-runner update [accept VERSION]
      Show the runner update waiting for the customer, or accept it: the
      running runner switches to it (a runner without --auto-update).
      These take --state-dir or --work-dir, as run was given them.
  outpost-runner offline verify BUNDLE.tar --release-key KEY.pem
      Check a signed release bundle against the vendor's release key.
  outpost-runner offline deploy BUNDLE.tar --install-file install.json --release-key KEY.pem --result result.json
      Verify a release bundle and deploy it with no network (docs/bundles.md).
  outpost-runner version
      Print the version.

Run "outpost-runner run --help" for the flags of run.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return runner.Command("outpost-runner", usage, args, stdout, stderr, map[string]func([]string) int{
		"run":     func(args []string) int { return runRunner(args, stderr) },
		"job":     func(args []string) int { return runner.JobCommand("outpost-runner", args, nil, stderr) },
		"pause":   func(args []string) int { return pauseCommand(args, stdout, stderr) },
		"resume":  func(args []string) int { return resumeCommand(args, stdout, stderr) },
		"consent": func(args []string) int { return consentCommand(args, stdout, stderr) },
		"history": func(args []string) int { return historyCommand(args, stdout, stderr) },
		"update":  func(args []string) int { return updateCommand(args, stdout, stderr) },
		"offline": func(args []string) int { return offlineCommand(args, stdout, stderr) },
	})
}

func runRunner(args []string, stderr io.Writer) int {
	var cfg runner.Config
	fs := envflag.New("outpost-runner run", "OUTPOST_")
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.GatewayURL, "gateway-url", "", "the gateway's URL as runners reach it, e.g. https://gateway.example.com (required)")
	fs.StringVar(&cfg.Token, "token", "", "a registration token (oprg_…) or a runner token (oprn_…)")
	fs.StringVar(&cfg.TokenFile, "token-file", "", "file that keeps the runner token: read when it exists, written after registering")
	fs.IntVar(&cfg.Concurrency, "concurrency", runner.DefaultConcurrency, "how many jobs run at once (jobs queued early that wait for their inputs take as many places again)")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "directory for the jobs' working directories (default: a temporary one)")
	fs.StringVar(&cfg.Name, "name", "", "the runner's name, shown in the control plane (default: the host name)")
	fs.DurationVar(&cfg.CancelGrace, "cancel-grace", runner.DefaultCancelGrace, "time between SIGTERM and SIGKILL when a job is stopped")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", runner.DefaultShutdownTimeout, "on SIGINT/SIGTERM, how long running jobs may go on before they are cancelled")
	fs.StringVar(&cfg.Terraform.Binary, "terraform", "", "the terraform binary (default: terraform on PATH, then .tools/terraform/1.5.7/terraform in the working directory or a parent)")
	fs.StringVar(&cfg.Terraform.CLIConfig, "terraform-cli-config", "", "terraform CLI configuration file for jobs (default: an empty one)")
	initCache := fs.Bool("terraform-init-cache", true, "reuse, for up to an hour, what terraform init left when an earlier job initialised the same module archive with the same terraform and CLI configuration (kept under --work-dir); false runs init in every job")
	fs.StringVar(&cfg.Terraform.KubeAssets, "kube-assets", "", "directory holding etcd and kube-apiserver, for local sandboxes that start a cluster (passed to jobs as OUTPOST_KUBE_ASSETS)")
	fs.DurationVar(&cfg.Terraform.KubeAssetsWait, "kube-assets-wait", 0, "how long a local cluster waits for etcd and kube-apiserver still being built (passed to jobs as OUTPOST_KUBE_ASSETS_WAIT; default: not at all)")
	fs.StringVar(&cfg.CABundle, "ca-bundle", "", "PEM file of CA certificates to trust beyond the system's, for the gateway and, in jobs, registries and terraform's state backend (a proxy comes from HTTPS_PROXY and NO_PROXY, which jobs get too)")
	fs.StringVar(&cfg.HealthAddr, "health-addr", "", "serve liveness probes on GET "+runner.HealthPath+" at this address, e.g. :8081 (default: none)")
	fs.StringVar(&cfg.Deployment, "deployment", "", "the Kubernetes Deployment (NAMESPACE/NAME) the runner runs in, set by the Helm chart: a self-update rolls its image (default: none, the runner replaces its binary)")
	fs.StringVar(&cfg.PlanPolicies, "plan-policies", "", "directory of the customer's plan policies (*.rego, Rego v1): every plan a job makes must pass them, and the vendor's, before it is applied (default: none)")
	fs.BoolVar(&cfg.AutoUpdate, "auto-update", false, "let the control plane update this runner to any release signed with its release key (default: an update waits until accepted with --accept-update)")
	fs.StringVar(&cfg.AcceptUpdate, "accept-update", "", "the runner version the customer accepts an update to, when not --auto-update")
	fs.StringVar(&cfg.ReleaseKeys, "release-key", "", "base64 ed25519 public keys (comma-separated) that sign the runner releases this runner accepts (default: the key built into the runner)")
	fs.StringVar(&cfg.JobUsers, "job-user", "", "run jobs as another uid, UID or FIRST-LAST (each job its own uid, and its own gid unless :GID is given), with :GID; the runner must run as root (default: jobs run as the runner's uid)")
	applyPolicy := policyFlags(fs, &cfg)
	fs.StringVar(&cfg.Helm.JobBinary, "helm-job-bin", "", "the binary that runs helm jobs and helm chart builds (default: "+runner.HelmJobBinary+" next to this binary, then on PATH; without one the runner does not run them)")

	if err := fs.Parse(args, os.Getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := checkRunFlags(fs, cfg); err != nil {
		fmt.Fprintf(stderr, "outpost-runner run: %v\n", err)
		return 2
	}

	cfg.Terraform.NoInitCache = !*initCache
	applyPolicy()
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	r, err := runner.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "outpost-runner run: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go pauseOnSignals(ctx, runner.StateDir(cfg.StateDir, cfg.WorkDir), cfg.Logger)
	if err := r.Run(ctx); err != nil {
		cfg.Logger.Error("runner failed", "err", err)
		return 1
	}
	return 0
}

// checkRunFlags names the flag that is wrong.
func checkRunFlags(fs *envflag.FlagSet, cfg runner.Config) error {
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case cfg.GatewayURL == "":
		return errors.New("--gateway-url is required (or set OUTPOST_GATEWAY_URL)")
	case cfg.Token == "" && cfg.TokenFile == "":
		return errors.New("--token is required (or set OUTPOST_TOKEN, or give --token-file)")
	case cfg.Concurrency < 1:
		return fmt.Errorf("--concurrency must be at least 1, got %d", cfg.Concurrency)
	case cfg.CancelGrace <= 0:
		return fmt.Errorf("--cancel-grace must be more than 0, got %s", cfg.CancelGrace)
	case cfg.ShutdownTimeout <= 0:
		return fmt.Errorf("--shutdown-timeout must be more than 0, got %s", cfg.ShutdownTimeout)
	}
	return nil
}
