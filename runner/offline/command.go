package offline

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/planpolicy"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/runner"
	"github.com/outpost-dev/outpost/runner/plugins/terraform"
)

// EnvRunnerBinary names outpost-runner to the deploy (outpost-runner sets
// it when it execs outpost-runner-helm): the binary of terraform jobs.
const EnvRunnerBinary = "OUTPOST_OFFLINE_RUNNER_BIN"

// Usage is `offline deploy`'s.
const Usage = `Usage:
  outpost-runner offline deploy BUNDLE.tar --install-file install.json --release-key KEY.pem
      [--state-dir DIR] [--input NAME=VALUE ...] [--plan-policies DIR]
      [--terraform BIN] [--terraform-cli-config FILE] [--kubeconfig FILE] [--kube-assets DIR]
      --result result.json
      Verify a release bundle, then deploy it to the install the install file
      (outpostctl installs export) names, with no network: the sandbox, the
      bundle's builds loaded into the install's registry, then each component.
      Terraform state stays in --state-dir. Charts deploy to the cluster the
      app names (a component's kubeconfig, the sandbox's kubeconfig output),
      else to --kubeconfig's (default: KUBECONFIG's). Sensitive inputs come from --input
      or are asked on the terminal. The result (outpostctl installs
      import-result) is written also when a step fails. Exit 0 when every step
      succeeded, 1 when the bundle is refused or a step failed, 2 for bad usage
      or an install file that does not fit.
`

// inputFlags are --input NAME=VALUE, repeated.
type inputFlags map[string]string

func (f inputFlags) String() string { return "" }
func (f inputFlags) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE")
	}
	f[name] = value
	return nil
}

// commandFlags are offline deploy's flags.
type commandFlags struct {
	installFile, keyFile, stateDir, resultFile, kubeconfig, policies string
	tf                                                               terraform.Options
	inputs                                                           inputFlags
}

// newFlagSet defines offline deploy's flags.
func newFlagSet(stderr io.Writer) (*flag.FlagSet, *commandFlags) {
	f := &commandFlags{inputs: inputFlags{}}
	fs := flag.NewFlagSet("outpost-runner offline deploy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, Usage) }
	fs.StringVar(&f.installFile, "install-file", "", "the install file (required)")
	fs.StringVar(&f.keyFile, "release-key", "", "the vendor's release public key, PEM (required)")
	fs.StringVar(&f.stateDir, "state-dir", "outpost-offline-state", "directory keeping terraform state between deploys")
	fs.StringVar(&f.resultFile, "result", "", "where to write the result (required)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster charts deploy to when the app names none (default: KUBECONFIG)")
	fs.StringVar(&f.policies, "plan-policies", "", "directory of the customer's plan policies (*.rego), as for outpost-runner run")
	fs.StringVar(&f.tf.Binary, "terraform", "", "the terraform binary (default: terraform on PATH)")
	fs.StringVar(&f.tf.CLIConfig, "terraform-cli-config", "", "terraform CLI configuration file for jobs (default: an empty one)")
	fs.StringVar(&f.tf.KubeAssets, "kube-assets", os.Getenv(terraform.EnvKubeAssets),
		"directory holding etcd and kube-apiserver, for local sandboxes that start a cluster, as for outpost-runner run (default: "+terraform.EnvKubeAssets+")")
	fs.Var(f.inputs, "input", "an input's value, NAME=VALUE (repeatable); sensitive ones not given are asked on the terminal")
	return fs, f
}

// Command is "offline deploy ARGS" (without "deploy"); it returns the exit
// code.
func Command(args []string, stdin *os.File, stdout, stderr io.Writer) int {
	fs, f := newFlagSet(stderr)
	files, exit, ok := envflag.Interspersed(fs, args) // flags before and after the bundle
	if !ok {
		return exit
	}
	o, err := f.options(files, stdin, stderr)
	if err != nil {
		return usage(stderr, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := Deploy(ctx, o)
	switch {
	case errors.Is(err, ErrBadInstall):
		return usage(stderr, fmt.Errorf("--install-file %s: %w", f.installFile, err))
	case err != nil:
		fmt.Fprintf(stderr, "outpost-runner offline deploy: %s: %v\n", o.Bundle, err)
		return 1
	}
	if err := writeResult(f.resultFile, res); err != nil {
		fmt.Fprintf(stderr, "outpost-runner offline deploy: --result: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s (config version %d); result in %s\n", o.Install.InstallID, res.Status, res.ConfigVersion, f.resultFile)
	if res.Status != "succeeded" {
		return 1
	}
	return 0
}

// usage reports a usage error; it returns exit code 2.
func usage(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "outpost-runner offline deploy: %v\n", err)
	return 2
}

// options checks the flags and reads the files they name: a usage error
// when one does not fit.
func (f *commandFlags) options(files []string, stdin *os.File, stderr io.Writer) (Options, error) {
	o := Options{Progress: stderr, Version: runner.Version, KubeconfigFile: f.kubeconfig}
	switch {
	case len(files) != 1:
		return o, fmt.Errorf("name one bundle (got %d)", len(files))
	case f.installFile == "":
		return o, errors.New("--install-file: required")
	case f.keyFile == "":
		return o, errors.New("--release-key: required")
	case f.resultFile == "":
		return o, errors.New("--result: required")
	}
	o.Bundle = files[0]
	var err error
	if o.ReleaseKey, err = readKey(f.keyFile); err != nil {
		return o, fmt.Errorf("--release-key %s: %w", f.keyFile, err)
	}
	if o.Install, err = readInstall(f.installFile); err != nil {
		return o, fmt.Errorf("--install-file %s: %w", f.installFile, err)
	}
	if o.Sensitive, err = sensitiveInputs(o.Install, f.inputs, stdin, stderr); err != nil {
		return o, err
	}
	if o.StateDir, err = filepath.Abs(f.stateDir); err != nil {
		return o, fmt.Errorf("--state-dir: %w", err)
	}
	return o, o.jobs(f.tf, f.policies)
}

func readKey(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return releasebundle.ParsePublicKeyPEM(raw)
}

// readInstall reads and checks an install file.
func readInstall(path string) (protocol.OfflineInstall, error) {
	var f protocol.OfflineInstall
	raw, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return f, err
	}
	return f, f.Check()
}

// sensitiveInputs are the install's sensitive inputs' values: --input's,
// else asked on the terminal (not echoed).
func sensitiveInputs(f protocol.OfflineInstall, given inputFlags, stdin *os.File, stderr io.Writer) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range f.SensitiveInputs {
		if v, ok := given[name]; ok {
			out[name] = v
			continue
		}
		if stdin == nil || !term.IsTerminal(int(stdin.Fd())) {
			return nil, fmt.Errorf("input %s: sensitive, give it with --input %s=VALUE (no terminal to ask on)", name, name)
		}
		fmt.Fprintf(stderr, "%s (sensitive, not echoed): ", name)
		v, err := term.ReadPassword(int(stdin.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", name, err)
		}
		out[name] = string(v)
	}
	for name := range given {
		if _, ok := out[name]; !ok {
			if _, ok := f.Inputs[name]; !ok {
				return nil, fmt.Errorf("--input %s: the install file has no such input", name)
			}
			f.Inputs[name] = given[name]
		}
	}
	return out, nil
}

// jobs finds the job binaries and makes the jobs' environment, as
// outpost-runner run does.
func (o *Options) jobs(tf terraform.Options, policies string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	o.HelmExe = self
	if o.RunnerExe = os.Getenv(EnvRunnerBinary); o.RunnerExe == "" {
		o.RunnerExe = filepath.Join(filepath.Dir(self), "outpost-runner")
	}
	cwd, _ := os.Getwd()
	tf.NoInitCache = true
	if tf, _, err = tf.Resolve(os.Getenv("PATH"), cwd); err != nil {
		return err
	}
	o.JobEnv = tf.Env("")
	if policies != "" {
		if policies, err = filepath.Abs(policies); err != nil {
			return err
		}
		o.JobEnv = append(o.JobEnv, planpolicy.EnvDir+"="+policies)
	}
	return nil
}

// writeResult writes the result whole or not at all.
func writeResult(path string, res *protocol.OfflineResult) error {
	if err := res.Check(); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(raw, '\n'))
}
