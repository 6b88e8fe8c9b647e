package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/releasebundle"
	"github.com/outpost-dev/outpost/runner"
)

const offlineUsage = `Usage:
  outpost-runner offline verify BUNDLE.tar --release-key KEY.pem [-o json]
      Check a release bundle (outpostctl bundle export) against the vendor's
      release public key (outpostctl bundle release-key --out KEY.pem): the
      signature over its index, every blob against its digest, and that every
      artifact the index lists is whole. Exit 0 when it verifies, 1 naming
      what failed, 2 for bad usage.
  outpost-runner offline deploy BUNDLE.tar --install-file install.json --release-key KEY.pem
      [--state-dir DIR] [--input NAME=VALUE ...] --result result.json
      Verify the bundle and deploy it with no network (needs outpost-runner-helm
      beside this binary); "offline deploy -h" says more.
`

// offlineCommand runs `outpost-runner offline …`.
func offlineCommand(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) > 0 && args[0] == "verify":
		return verifyCommand(args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "deploy":
		return deployCommand(args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, offlineUsage)
	return 2
}

// deployCommand is `outpost-runner offline deploy`: it renders manifests
// from the bundle's app config, which links what this binary must not
// (appconfig, BuildKit: the dependency fence), so outpost-runner-helm runs
// it (runner/offline), found as for helm jobs, with this binary for the
// terraform jobs and the terminal for sensitive inputs.
func deployCommand(args []string, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "outpost-runner offline deploy: %v\n", err)
		return 1
	}
	helm := filepath.Join(filepath.Dir(self), runner.HelmJobBinary)
	if _, err := os.Stat(helm); err != nil {
		if helm, err = exec.LookPath(runner.HelmJobBinary); err != nil {
			fmt.Fprintf(stderr, "outpost-runner offline deploy: needs %s next to outpost-runner or on PATH\n", runner.HelmJobBinary)
			return 1
		}
	}
	cmd := exec.Command(helm, append([]string{"offline-deploy"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = append(os.Environ(), offlineRunnerEnv+"="+self)
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintf(stderr, "outpost-runner offline deploy: %v\n", err)
		return 1
	}
	return 0
}

func verifyCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("outpost-runner offline verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keyFile := fs.String("release-key", "", "the vendor's release public key, PEM (required)")
	output := fs.String("o", "text", "output: text or json")
	files, exit, ok := envflag.Interspersed(fs, args) // flags before and after the bundle
	if !ok {
		return exit
	}
	if len(files) != 1 || *keyFile == "" || (*output != "text" && *output != "json") {
		fmt.Fprint(stderr, offlineUsage)
		return 2
	}
	raw, err := os.ReadFile(*keyFile)
	if err != nil {
		fmt.Fprintf(stderr, "outpost-runner offline verify: --release-key: %v\n", err)
		return 2
	}
	pub, err := releasebundle.ParsePublicKeyPEM(raw)
	if err != nil {
		fmt.Fprintf(stderr, "outpost-runner offline verify: --release-key %s: %v\n", *keyFile, err)
		return 2
	}
	r, err := releasebundle.Verify(context.Background(), files[0], pub)
	if err != nil {
		fmt.Fprintf(stderr, "outpost-runner offline verify: %s: %v\n", files[0], err)
		return 1
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(r)
		return 0
	}
	fmt.Fprintf(stdout, "%s: verified with release key %s\napp %s (%s), config version %s\ncomponents: %s\n%d blobs, %d bytes, index %s\n",
		files[0], r.KeyID, r.AppName, r.App, r.ConfigVersion, strings.Join(r.Components, ", "), r.Blobs, r.Bytes, r.Index)
	return 0
}

// offlineRunnerEnv is runner/offline.EnvRunnerBinary (a package this binary
// must not link).
const offlineRunnerEnv = "OUTPOST_OFFLINE_RUNNER_BIN"
