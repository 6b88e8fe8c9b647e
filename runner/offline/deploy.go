package offline

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/outpost-dev/outpost/contract"
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
	specs, err := d.plan()
	if err != nil {
		return nil, err
	}
	res.Steps = d.run(ctx, specs)
	res.Status = "succeeded"
	for i, st := range res.Steps {
		if h := specs[i].Hook; st.Status == "failed" && (h == nil || !h.ContinueOnFailure) {
			res.Status, res.Error = "failed", "step "+st.Name+": "+st.Error
			break
		}
	}
	res.FinishedAt = time.Now().UTC()
	return res, nil
}

// run runs the steps in order (plan's), each once the steps it follows
// allow it (outcomes.skip): a step that failed stops those that follow it
// (a hook with continue_on_failure stops none); an after-hook runs by its
// when. A hook that failed with continue_on_failure does not fail the deploy.
func (d *deployment) run(ctx context.Context, specs []contract.StepSpec) []protocol.OfflineStep {
	o := outcomes{specs: map[string]contract.StepSpec{}, status: map[string]string{}}
	steps := make([]protocol.OfflineStep, len(specs))
	for i, spec := range specs {
		o.specs[spec.Name] = spec
		steps[i] = offlineStep(spec)
	}
	for i, spec := range specs {
		st := &steps[i]
		if why := o.skip(spec); why != "" {
			st.Status, st.Error, o.status[st.Name] = "skipped", why, "skipped"
			fmt.Fprintf(d.progress, "outpost: %s: %s\n", st.Name, why)
			continue
		}
		st.StartedAt = time.Now().UTC()
		fmt.Fprintf(d.progress, "outpost: %s: running\n", st.Name)
		err := d.step(ctx, st, spec.Hook)
		st.FinishedAt = time.Now().UTC()
		st.Status = "succeeded"
		if err != nil {
			st.Status, st.Error = "failed", d.scrub.Replace(err.Error())
		}
		o.status[st.Name] = st.Status
		st.Log = d.scrub.Replace(st.Log)
		fmt.Fprintf(d.progress, "outpost: %s: %s%s\n", st.Name, st.Status, prefixed(": ", st.Error))
	}
	return steps
}

// offlineStep is how the result shows a step: a hook's names no component
// (its outputs are its action's, not the component's).
func offlineStep(spec contract.StepSpec) protocol.OfflineStep {
	switch {
	case spec.Hook != nil:
		return protocol.OfflineStep{Name: spec.Name, Kind: protocol.OfflineStepHook}
	case spec.Name == status.SandboxStep:
		return protocol.OfflineStep{Name: spec.Name, Kind: protocol.OfflineStepSandbox}
	case spec.Name == syncStep:
		return protocol.OfflineStep{Name: spec.Name, Kind: protocol.OfflineStepSync}
	}
	return protocol.OfflineStep{Name: spec.Name, Kind: protocol.OfflineStepComponent, Component: spec.Name}
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// step runs one step.
func (d *deployment) step(ctx context.Context, st *protocol.OfflineStep, hook *contract.Hook) error {
	switch st.Kind {
	case protocol.OfflineStepHook:
		return d.hook(ctx, st, hook)
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
