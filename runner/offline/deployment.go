package offline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner"
)

// deployment is one offline deploy under way.
type deployment struct {
	o        Options
	b        *bundle
	cfg      *appconfig.Config
	inst     jobmanifest.Install
	state    *stateServer
	lock     *os.File
	progress io.Writer
	scrub    *strings.Replacer
	// outputs are the steps' outputs as recorded (TerraformApplyOutputs
	// JSON, by step), read from the state directory: those of an earlier
	// deploy until the step runs again.
	outputs map[string]string
	// actions are the outputs of the actions the hooks of this deploy ran,
	// as templates read them (.actions.<action>.outputs).
	actions  map[string]appconfig.ActionOutputs
	registry *protocol.RegistryAccess
	jobs     int
}

// newDeployment takes the state directory (one deploy at a time), starts
// the state backend and gathers the install's inputs.
func newDeployment(ctx context.Context, o Options, b *bundle) (*deployment, error) {
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(o.StateDir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("state dir %s: another offline deploy uses it", o.StateDir)
	}
	inst := jobmanifest.Install{ID: o.Install.InstallID, Name: o.Install.InstallName, Labels: o.Install.Labels,
		Inputs: maps.Clone(o.Install.Inputs), Sensitive: map[string]bool{}}
	if inst.Inputs == nil {
		inst.Inputs = map[string]string{}
	}
	var secrets []string
	for _, name := range o.Install.SensitiveInputs {
		v, ok := o.Sensitive[name]
		if !ok {
			lock.Close()
			return nil, fmt.Errorf("%w: input %s: sensitive, and not given (--input %s=VALUE, or on a terminal)", ErrBadInstall, name, name)
		}
		inst.Inputs[name], inst.Sensitive[name] = v, true
		secrets = append(secrets, v)
	}
	d := &deployment{o: o, b: b, cfg: b.cfg, inst: inst, lock: lock, progress: o.Progress, outputs: map[string]string{},
		actions: map[string]appconfig.ActionOutputs{}}
	if d.progress == nil {
		d.progress = io.Discard
	}
	d.setScrub(secrets)
	if d.state, err = startStateServer(o.StateDir); err != nil {
		d.close()
		return nil, err
	}
	for _, step := range append([]string{status.SandboxStep}, slices.Collect(maps.Keys(d.cfg.Graph()))...) {
		if outs, ok, err := d.stateOutputs(step); err != nil {
			d.close()
			return nil, err
		} else if ok {
			d.record(nil, step, outs)
		}
	}
	return d, nil
}

func (d *deployment) close() {
	if d.state != nil {
		d.state.close()
	}
	d.lock.Close()
}

// setScrub replaces each sensitive value (of 4 bytes or more, as the
// plugins do) with "(sensitive value)".
func (d *deployment) setScrub(values []string) {
	var pairs []string
	for _, v := range values {
		if len(v) >= 4 {
			pairs = append(pairs, v, "(sensitive value)")
		}
	}
	d.scrub = strings.NewReplacer(pairs...)
}

// data is what templates read now.
func (d *deployment) data() (appconfig.Data, error) {
	data, err := jobmanifest.Data(d.cfg, d.inst, d.outputs)
	data.Actions = d.actions
	return data, err
}

// record keeps a step's outputs for the templates after it, and adds its
// sensitive ones to what is scrubbed; st (nil for an earlier deploy's)
// gets those the result may hold.
func (d *deployment) record(st *protocol.OfflineStep, step string, outs map[string]protocol.TerraformOutput) {
	raw, _ := json.Marshal(protocol.TerraformApplyOutputs{Outputs: outs})
	d.outputs[step] = string(raw)
	if data, err := d.data(); err == nil {
		d.setScrub(data.Sensitive())
	}
	if st == nil {
		return
	}
	st.Outputs = map[string]any{}
	for name, o := range outs {
		d.showOutput(st, name, string(o.Value), o.Value, o.Sensitive)
	}
}

// showOutput puts an output in the step's result unless it is sensitive or
// its text holds a sensitive value.
func (d *deployment) showOutput(st *protocol.OfflineStep, name, text string, value any, sensitive bool) {
	switch {
	case sensitive:
	case d.scrub.Replace(text) != text: // holds a sensitive value not marked so
		st.Log += fmt.Sprintf("outpost: output %s left out of the result: it holds a sensitive value\n", name)
	default:
		st.Outputs[name] = value
	}
}

// recordValues records a step's outputs made by the deploy (a chart's
// release, an image's place), as record does terraform's.
func (d *deployment) recordValues(st *protocol.OfflineStep, vals map[string]appconfig.Value) error {
	outs := make(map[string]protocol.TerraformOutput, len(vals))
	for name, v := range vals {
		raw, err := json.Marshal(v.Value)
		if err != nil {
			return fmt.Errorf("output %s: %w", name, err)
		}
		outs[name] = protocol.TerraformOutput{Value: raw, Sensitive: v.Sensitive}
	}
	d.record(st, st.Component, outs)
	return nil
}

// stateOutputs are the outputs in a step's state file (false: none yet).
func (d *deployment) stateOutputs(step string) (map[string]protocol.TerraformOutput, bool, error) {
	raw, err := os.ReadFile(d.state.path(jobmanifest.Workspace(d.inst.ID, step)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	var st struct {
		Outputs map[string]protocol.TerraformOutput `json:"outputs"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, false, fmt.Errorf("state of %s: %w", step, err)
	}
	if st.Outputs == nil {
		st.Outputs = map[string]protocol.TerraformOutput{}
	}
	return st.Outputs, true, nil
}

// runJob runs a job as the runner would, its output in the step's log.
func (d *deployment) runJob(ctx context.Context, st *protocol.OfflineStep, typ string, manifest any) (runner.Result, error) {
	raw, err := json.Marshal(manifest)
	if err != nil {
		return runner.Result{}, err
	}
	d.jobs++
	work, err := os.MkdirTemp(d.o.StateDir, "job-")
	if err != nil {
		return runner.Result{}, err
	}
	defer os.RemoveAll(work) // job.json holds the rendered variables
	var mu sync.Mutex
	var log strings.Builder
	exe := d.o.RunnerExe
	if slices.Contains(runner.HelmJobTypes, typ) {
		exe = d.o.HelmExe
	}
	job := runner.LocalJob{Exe: exe, Dir: filepath.Join(work, "job"), Env: d.o.JobEnv,
		Job: protocol.Job{ID: fmt.Sprintf("offline-%s-%d", st.Name, d.jobs), Type: typ, Attempt: 1, Manifest: raw},
		Log: func(_, line string) {
			mu.Lock()
			defer mu.Unlock()
			log.WriteString(line)
		}}
	res, err := job.Run(ctx)
	st.Log += log.String()
	return res, err
}
