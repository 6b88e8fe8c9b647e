package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// supportStore is what the support activities read and write of the store.
type supportStore interface {
	GetSupportBundleByID(ctx context.Context, id string) (store.SupportBundle, error)
	UpdateSupportBundle(ctx context.Context, b store.SupportBundle) error
	GetJobOutcome(ctx context.Context, jobID string) (store.Job, error)
	ListJobs(ctx context.Context, orgID, installID string, limit int) ([]store.Job, error)
	GetTerraformState(ctx context.Context, orgID, workspace string) (store.TerraformStateVersion, error)
}

// Support are the activities of a support bundle (collected by the
// install's runner, redacted before it leaves) and of a logs request.
type Support struct {
	store  supportStore
	render *renderer
	queue  *jobQueue
}

// supportJobTimeout bounds a support job on the runner.
const supportJobTimeout = 10 * time.Minute

// jobHistoryLimit is how many of the install's latest jobs a bundle lists.
const jobHistoryLimit = 200

// EnqueueSupportJob renders a support bundle's manifest — the install's cluster and releases, its
// sensitive values to redact, and the parts the control plane holds (job history, terraform
// resources) — and queues it on the install's runner; idempotent by key. The manifest, which holds
// secrets, stays in the store.
func (a *Support) EnqueueSupportJob(ctx context.Context, bundleID, key string) (contract.JobRef, error) {
	b, err := a.store.GetSupportBundleByID(ctx, bundleID)
	if err != nil {
		return contract.JobRef{}, err
	}
	inst, cfg, data, err := a.render.installData(ctx, b.InstallID)
	if err != nil {
		return contract.JobRef{}, err
	}
	m := protocol.SupportManifest{Redact: sensitiveValues(data), MaxBytes: store.DefaultSupportBundleMaxBytes,
		Files: map[string]string{}}
	if m.Kubeconfig, m.Releases, err = a.supportCluster(ctx, cfg, inst.ID, data); err != nil {
		return contract.JobRef{}, err
	}
	if m.Files["jobs.txt"], err = a.jobHistory(ctx, inst); err != nil {
		return contract.JobRef{}, err
	}
	if err := a.terraformResources(ctx, cfg, inst, m.Files); err != nil {
		return contract.JobRef{}, err
	}
	ref, err := a.queue.enqueueManifest(ctx, key, inst.ID, protocol.JobTypeSupport, m, supportJobTimeout)
	if err != nil {
		return contract.JobRef{}, err
	}
	b.JobID, b.Status = &ref.JobID, status.JobRunning
	return ref, a.store.UpdateSupportBundle(ctx, b)
}

// supportCluster is the install's kubeconfig (its first helm_chart component's, or the sandbox's) and
// its helm releases; no cluster is "" and no error: the bundle says so.
func (a *Support) supportCluster(ctx context.Context, cfg *appconfig.Config, installID string, data appconfig.Data) (string, []protocol.SupportRelease, error) {
	var releases []protocol.SupportRelease
	kubeconfig := ""
	for _, name := range cfg.ComponentNames() {
		c, _ := cfg.Component(name)
		if c.Helm == nil {
			continue
		}
		releases = append(releases, protocol.SupportRelease{Component: name, Release: c.Helm.ReleaseName, Namespace: c.Helm.Namespace})
		if kubeconfig == "" {
			kc, err := a.render.kubeconfig(ctx, cfg, name, installID, data)
			var appErr *temporal.ApplicationError
			if err != nil && !(errors.As(err, &appErr) && appErr.NonRetryable()) {
				return "", nil, err
			}
			kubeconfig = kc
		}
	}
	if kubeconfig == "" {
		raw, ok, err := a.render.sandboxOutput(ctx, installID, OutputKubeconfig)
		if err != nil {
			return "", nil, err
		}
		if ok {
			_ = json.Unmarshal(raw, &kubeconfig)
		}
	}
	return kubeconfig, releases, nil
}

// sensitiveValues are the install's sensitive inputs and outputs, as text: a string as it is, any
// other value as JSON and each string within it.
func sensitiveValues(d appconfig.Data) []string {
	var out []string
	add := func(vs map[string]appconfig.Value) {
		for _, v := range vs {
			if v.Sensitive {
				out = append(out, valueTexts(v.Value)...)
			}
		}
	}
	add(d.Inputs)
	add(d.SandboxOutputs)
	for _, c := range d.Components {
		add(c)
	}
	return out
}

func valueTexts(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return []string{x}
	case map[string]any:
		out := jsonText(x)
		for _, e := range x {
			out = append(out, valueTexts(e)...)
		}
		return out
	case []any:
		out := jsonText(x)
		for _, e := range x {
			out = append(out, valueTexts(e)...)
		}
		return out
	}
	return jsonText(v)
}

func jsonText(v any) []string {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return []string{string(b)}
}

// jobHistory summarises the install's latest jobs, newest first.
func (a *Support) jobHistory(ctx context.Context, inst store.Install) (string, error) {
	jobs, err := a.store.ListJobs(ctx, inst.OrgID, inst.ID, jobHistoryLimit)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The latest %d jobs of install %s (%s), newest first.\n\n", len(jobs), inst.Name, inst.ID)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED\tJOB\tTYPE\tSTATUS\tATTEMPT\tFINISHED\tERROR")
	for _, j := range jobs {
		finished := ""
		if j.FinishedAt != nil {
			finished = j.FinishedAt.UTC().Format(time.RFC3339)
		}
		msg, _, _ := strings.Cut(j.Error, "\n")
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", j.CreatedAt.UTC().Format(time.RFC3339), j.ID, j.Type, j.Status,
			j.Attempt, finished, msg)
	}
	tw.Flush()
	return b.String(), nil
}

// terraformResources adds terraform/<step>.txt per workspace of the install: the latest state's
// resources by address, type and instance count, never an attribute value. It reads the state the
// control plane holds (a job's state credential reaches one workspace only).
func (a *Support) terraformResources(ctx context.Context, cfg *appconfig.Config, inst store.Install, files map[string]string) error {
	steps := []string{status.SandboxStep}
	for _, name := range cfg.ComponentNames() {
		if c, _ := cfg.Component(name); c.Terraform != nil {
			steps = append(steps, name)
		}
	}
	for _, step := range steps {
		ws := Workspace(inst.ID, step)
		v, err := a.store.GetTerraformState(ctx, inst.OrgID, ws)
		switch {
		case errors.Is(err, store.ErrNotFound):
			files["terraform/"+step+".txt"] = "workspace " + ws + ": no state (never applied, or destroyed)\n"
			continue
		case err != nil:
			return err
		}
		files["terraform/"+step+".txt"] = stateResources(ws, v)
	}
	return nil
}

func stateResources(ws string, v store.TerraformStateVersion) string {
	version, resources, err := store.StateResources(v.State)
	if err != nil {
		return fmt.Sprintf("workspace %s: state version %d is not terraform's JSON state\n", ws, v.Version)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "workspace %s: state version %d, serial %d, terraform %s, %d resources\n\n", ws, v.Version, v.Serial,
		version, len(resources))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ADDRESS\tTYPE\tMODE\tINSTANCES")
	for _, r := range resources {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", r.Address, r.Type, r.Mode, r.Instances)
	}
	tw.Flush()
	return b.String()
}

// FinishSupportBundle records the bundle's outcome and what its archive holds.
func (a *Support) FinishSupportBundle(ctx context.Context, bundleID string, res contract.SupportResult) error {
	b, err := a.store.GetSupportBundleByID(ctx, bundleID)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	b.Status, b.Error, b.FinishedAt = res.Status, res.Error, &now
	if res.Status == status.JobSucceeded && res.JobID != "" {
		job, err := a.store.GetJobOutcome(ctx, res.JobID)
		if err != nil {
			return err
		}
		var out protocol.SupportOutputs
		if err := json.Unmarshal([]byte(job.Outputs), &out); err != nil {
			b.Status, b.Error = status.JobFailed, "the support job's outputs are not readable: "+err.Error()
		}
		b.Parts, b.Unavailable = out.Parts, out.Unavailable
	}
	return a.store.UpdateSupportBundle(ctx, b)
}

// EnqueueKubeLogsJob queues a kube_logs job on the install's runner with the install's kubeconfig and
// sensitive values (rendered here, kept in the store); idempotent by key.
func (a *Support) EnqueueKubeLogsJob(ctx context.Context, req contract.KubeLogsRequest, key string) (contract.JobRef, error) {
	inst, cfg, data, err := a.render.installData(ctx, req.InstallID)
	if err != nil {
		return contract.JobRef{}, err
	}
	kubeconfig, _, err := a.supportCluster(ctx, cfg, inst.ID, data)
	if err != nil {
		return contract.JobRef{}, err
	}
	if kubeconfig == "" {
		return contract.JobRef{}, temporal.NewNonRetryableApplicationError("the install has no cluster: no kubeconfig to read logs with", "NoCluster", nil)
	}
	m := protocol.KubeLogsManifest{Kubeconfig: kubeconfig, Namespace: req.Namespace, Workload: req.Workload,
		SinceSeconds: req.SinceSeconds, TailLines: req.TailLines, Redact: sensitiveValues(data)}
	return a.queue.enqueueManifest(ctx, key, inst.ID, protocol.JobTypeKubeLogs, m, supportJobTimeout)
}
