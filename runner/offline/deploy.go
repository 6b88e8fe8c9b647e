package offline

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/releasebundle"
)

// Options are an offline deploy's.
type Options struct {
	Bundle     string
	ReleaseKey ed25519.PublicKey
	Install    protocol.OfflineInstall
	// Sensitive are the values of the install's sensitive inputs, by name
	// (given on the machine: never written anywhere).
	Sensitive map[string]string
	// StateDir keeps terraform state (<workspace>.tfstate) and job
	// directories between deploys.
	StateDir string
	// RunnerExe and HelmExe are the job binaries (outpost-runner,
	// outpost-runner-helm).
	RunnerExe, HelmExe string
	// KubeconfigFile is the machine's kubeconfig file ("": those KUBECONFIG
	// lists), where charts deploy when the app names no cluster: read only
	// then (see deployment.kubeconfig).
	KubeconfigFile string
	// JobEnv is added to every job's environment: the terraform options'
	// and the customer's plan policies directory, as the runner adds them.
	JobEnv []string
	// Progress takes a line per step (scrubbed).
	Progress io.Writer
	// Version is the runner's, for the result.
	Version string
}

// ErrBadInstall is an install file or input that does not fit the bundle:
// a usage error (exit 2).
var ErrBadInstall = errors.New("install")

// Deploy verifies the bundle and deploys it. The result says what ran,
// also when a step failed (then err is nil and result.Status "failed"); err
// is a bundle that does not verify or an install that does not fit, before
// anything ran.
func Deploy(ctx context.Context, o Options) (*protocol.OfflineResult, error) {
	started := time.Now().UTC()
	report, err := releasebundle.Verify(ctx, o.Bundle, o.ReleaseKey)
	if err != nil {
		return nil, err
	}
	if report.App != o.Install.AppID {
		return nil, fmt.Errorf("%w: app_id %s: the bundle is of app %s (%s)", ErrBadInstall, o.Install.AppID, report.App, report.AppName)
	}
	version, _ := strconv.Atoi(report.ConfigVersion)
	b, err := openBundle(ctx, o.Bundle, report)
	if err != nil {
		return nil, err
	}
	d, err := newDeployment(ctx, o, b)
	if err != nil {
		return nil, err
	}
	defer d.close()
	res := &protocol.OfflineResult{Format: protocol.OfflineResultFormat, InstallID: o.Install.InstallID, AppID: o.Install.AppID,
		ConfigVersion: version, BundleIndex: report.Index, StartedAt: started, RunnerVersion: o.Version}
	res.Steps = d.run(ctx)
	res.Status = "succeeded"
	for _, st := range res.Steps {
		if st.Status == "failed" {
			res.Status, res.Error = "failed", "step "+st.Name+": "+st.Error
			break
		}
	}
	res.FinishedAt = time.Now().UTC()
	return res, nil
}

// run runs the steps in order: the sandbox, the bundle's artifacts loaded
// into the install's registry, then the components in dependency order.
// After a failed step the rest are skipped.
func (d *deployment) run(ctx context.Context) []protocol.OfflineStep {
	order, err := d.cfg.Graph().Order()
	steps := []protocol.OfflineStep{{Name: status.SandboxStep, Kind: protocol.OfflineStepSandbox},
		{Name: "sync", Kind: protocol.OfflineStepSync}}
	for _, name := range order {
		steps = append(steps, protocol.OfflineStep{Name: name, Kind: protocol.OfflineStepComponent, Component: name})
	}
	failed := err != nil
	for i := range steps {
		st := &steps[i]
		if failed {
			st.Status = "skipped"
			continue
		}
		st.StartedAt = time.Now().UTC()
		fmt.Fprintf(d.progress, "outpost: %s: running\n", st.Name)
		err := d.step(ctx, st)
		st.FinishedAt = time.Now().UTC()
		st.Status = "succeeded"
		if err != nil {
			st.Status, st.Error, failed = "failed", d.scrub.Replace(err.Error()), true
		}
		st.Log = d.scrub.Replace(st.Log)
		fmt.Fprintf(d.progress, "outpost: %s: %s%s\n", st.Name, st.Status, prefixed(": ", st.Error))
	}
	return steps
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// step runs one step.
func (d *deployment) step(ctx context.Context, st *protocol.OfflineStep) error {
	switch st.Kind {
	case protocol.OfflineStepSandbox:
		return d.terraform(ctx, st, status.SandboxStep)
	case protocol.OfflineStepSync:
		return d.sync(ctx, st)
	}
	c, _ := d.cfg.Component(st.Component)
	switch {
	case c.Terraform != nil:
		return d.terraform(ctx, st, st.Component)
	case c.Helm != nil:
		return d.helm(ctx, st)
	case c.Image != nil, c.Docker != nil:
		return d.image(st)
	}
	return fmt.Errorf("component %s: a %s component is not deployed offline", st.Component, c.Type)
}
