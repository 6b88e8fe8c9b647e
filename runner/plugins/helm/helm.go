package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/outpost-dev/outpost/internal/syncio"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// Defaults and limits.
const (
	DefaultTimeout = 5 * time.Minute
	// MaxHistory is how many revisions of a release helm keeps (as helm's
	// CLI does by default); older ones are pruned on upgrade.
	MaxHistory = 10
	// storageDriver keeps releases as Secrets in the release's namespace.
	storageDriver = "secret"
)

// New returns a helm plugin for one job.
func New() plugins.Plugin { return &plugin{} }

type plugin struct {
	m       protocol.HelmManifest
	kube    *clientcmdapi.Config
	chart   chartSource
	values  map[string]any
	secrets *plugins.Secrets // redacted from every message and log line
	images  *relocator       // nil: the chart's images are left as they are
	outputs json.RawMessage
}

func (p *plugin) Validate(manifest json.RawMessage) error {
	if err := plugins.DecodeManifest(manifest, &p.m); err != nil {
		return err
	}
	m := &p.m
	switch m.Operation {
	case protocol.HelmPlan, protocol.HelmDeploy, protocol.HelmUninstall:
	case "":
		return errors.New("operation: required (plan, deploy or uninstall)")
	default:
		return fmt.Errorf("operation: must be plan, deploy or uninstall, got %q", m.Operation)
	}
	if m.Kubeconfig == "" {
		return errors.New("kubeconfig: required (the content of a kubeconfig file for the cluster)")
	}
	var err error
	if p.kube, err = parseKubeconfig(m.Kubeconfig); err != nil {
		return err
	}
	p.secrets = plugins.NewSecrets(kubeconfigSecrets(p.kube)...)
	if m.Release == "" {
		return errors.New("release: required")
	}
	if err := chartutil.ValidateReleaseName(m.Release); err != nil {
		return fmt.Errorf("release: %q: %w", m.Release, err)
	}
	if m.Namespace == "" {
		return errors.New("namespace: required")
	}
	if errs := validation.IsDNS1123Label(m.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace: %q: %s", m.Namespace, strings.Join(errs, "; "))
	}
	if m.TimeoutMS < 0 {
		return fmt.Errorf("timeout_ms: must not be negative, got %d", m.TimeoutMS)
	}
	if m.Operation == protocol.HelmUninstall {
		return nil // an uninstall needs no chart and no values
	}

	switch {
	case m.Chart != nil && len(m.ChartArchive) > 0:
		return errors.New("chart: give either chart (an OCI artifact) or chart_archive, not both")
	case m.Chart != nil:
		if err := validateChartRef(m.Chart); err != nil {
			return err
		}
		p.chart = registryChart{m.Chart}
		if m.Chart.Registry.Password != "" {
			p.secrets.Add(m.Chart.Registry.Password)
		}
	case len(m.ChartArchive) > 0:
		p.chart = archiveChart(m.ChartArchive)
	default:
		return fmt.Errorf("chart: required for a %s (an OCI artifact, or chart_archive)", m.Operation)
	}
	if p.images, err = newRelocator(m.Images); err != nil {
		return err
	}
	if m.Images != nil && m.Images.Registry.Password != "" {
		p.secrets.Add(m.Images.Registry.Password)
	}
	if p.values, err = values(m.ValuesFiles, m.Values); err != nil {
		return err
	}
	sensitive, err := sensitiveStrings(m.Values, m.SensitiveValues)
	if err != nil {
		return err
	}
	p.secrets.Add(sensitive...)
	return nil
}

// kubeconfigSecrets are the kubeconfig's credentials, which must never show.
func kubeconfigSecrets(c *clientcmdapi.Config) []string {
	var out []string
	for _, u := range c.AuthInfos {
		for _, s := range []string{u.Token, u.Password, string(u.ClientKeyData)} {
			if s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// redact replaces the job's secrets in s (plugins.Secrets).
func (p *plugin) redact(s string) string { return p.secrets.String(s) }

// Execute runs the operation. Its error is helm's own message (a template's
// parse error, the API server's refusal, …), with what the plugin did about
// it.
func (p *plugin) Execute(ctx context.Context, run plugins.Run) (int, error) {
	err := p.execute(ctx, run)
	if err != nil {
		return 0, errors.New(p.redact(err.Error()))
	}
	return 0, nil
}

func (p *plugin) execute(ctx context.Context, run plugins.Run) error {
	m := &p.m
	// helm logs from several goroutines at once (it deletes objects in
	// parallel).
	run.Stdout = &syncio.Writer{W: run.Stdout}
	var ch *chart.Chart
	if p.chart != nil {
		var err error
		if ch, err = p.chart.load(run.Dir); err != nil {
			return err
		}
		fmt.Fprintf(run.Stdout, "outpost: chart %s-%s\n", ch.Metadata.Name, ch.Metadata.Version)
	}
	getter, err := newKubeGetter(p.kube, m.Namespace)
	if err != nil {
		return err
	}
	cfg := new(action.Configuration)
	if err := cfg.Init(getter, m.Namespace, storageDriver, p.logger(run.Stdout)); err != nil {
		return fmt.Errorf("helm: %w", err)
	}
	fmt.Fprintf(run.Stdout, "outpost: helm %s of release %s in namespace %s\n", m.Operation, m.Release, m.Namespace)
	r := &releaseJob{m: m, cfg: cfg, out: run.Stdout, timeout: DefaultTimeout, images: p.images}
	if p.images != nil {
		p.images.out = run.Stdout
	}
	if m.Operation != protocol.HelmUninstall {
		if r.policies, err = newPolicyCheck(ctx, m, run); err != nil {
			return err
		}
	}
	if m.TimeoutMS > 0 {
		r.timeout = time.Duration(m.TimeoutMS) * time.Millisecond
	}
	if r.mapper, err = getter.ToRESTMapper(); err != nil {
		return fmt.Errorf("kubeconfig: discovering the cluster's API: %w", err)
	}
	dyn, err := dynamic.NewForConfig(getter.config)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	r.live = liveObjects{dyn: dyn, mapper: r.mapper}

	var out any
	switch m.Operation {
	case protocol.HelmDeploy:
		var rel protocol.HelmReleaseOutputs
		if rel, err = r.deploy(ctx, ch, p.values); err == nil {
			rel.Notes = p.redact(rel.Notes)
			out = rel
		}
	case protocol.HelmPlan:
		var plan protocol.HelmPlanOutputs
		if plan, err = r.plan(ctx, ch, p.values); err == nil {
			plan.Diff = p.redact(plan.Diff)
			fmt.Fprint(run.Stdout, plan.Diff)
			fmt.Fprintf(run.Stdout, "outpost: plan: %d to add, %d to change, %d to remove, %d drifted in the cluster (changes: %v)\n",
				len(plan.Added), len(plan.Changed), len(plan.Removed), len(plan.Drifted), plan.HasChanges)
			out = fitPlan(plan)
		}
	case protocol.HelmUninstall:
		out, err = r.uninstall()
	}
	if err != nil {
		return err
	}
	p.outputs, err = json.Marshal(out)
	return err
}

// logger sends helm's log to the job's logs.
func (p *plugin) logger(w io.Writer) action.DebugLog {
	return func(format string, v ...any) {
		fmt.Fprintln(w, "helm: "+p.redact(fmt.Sprintf(format, v...)))
	}
}

func (p *plugin) Outputs() (json.RawMessage, error) { return p.outputs, nil }

// Cleanup has nothing to do: the runner removes the job's directory (and
// with it the registry client's empty credentials file).
func (p *plugin) Cleanup() error { return nil }

// releaseJob is one operation on one release.
type releaseJob struct {
	m       *protocol.HelmManifest
	cfg     *action.Configuration
	mapper  meta.RESTMapper
	live    liveObjects
	out     io.Writer
	timeout time.Duration
	// policies check the rendered objects before a plan or a deploy (nil: none).
	policies *policyCheck
	// images relocates the chart's images (nil: none).
	images *relocator
}

// releaseState is a release's history: its latest revision and its
// deployed one (nil when none).
type releaseState struct {
	history        []*release.Release
	last, deployed *release.Release
}

func (r *releaseJob) state() (releaseState, error) {
	var s releaseState
	h, err := r.cfg.Releases.History(r.m.Release)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading the history of release %s: %w", r.m.Release, err)
	}
	s.history = h
	for _, rel := range h {
		if s.last == nil || rel.Version > s.last.Version {
			s.last = rel
		}
		if rel.Info.Status == release.StatusDeployed && (s.deployed == nil || rel.Version > s.deployed.Version) {
			s.deployed = rel
		}
	}
	return s, nil
}

// deploy installs the release, or upgrades a deployed one; a failed install is uninstalled and a
// failed upgrade rolled back (not helm's Atomic, which would also wait for readiness).
func (r *releaseJob) deploy(ctx context.Context, ch *chart.Chart, vals map[string]any) (protocol.HelmReleaseOutputs, error) {
	s, err := r.state()
	if err != nil {
		return protocol.HelmReleaseOutputs{}, err
	}
	if s.last != nil && s.last.Info.Status.IsPending() {
		// A job attempt stopped in the middle of an operation (the runner
		// never runs two attempts at once, so none is under way now).
		was := s.last.Info.Status
		s.last.SetStatus(release.StatusFailed, "interrupted: the job attempt that started this operation did not finish")
		if err := r.cfg.Releases.Update(s.last); err != nil {
			return protocol.HelmReleaseOutputs{}, fmt.Errorf("marking the interrupted revision %d failed: %w", s.last.Version, err)
		}
		fmt.Fprintf(r.out, "outpost: revision %d of release %s was left %s by an interrupted attempt: marked failed\n",
			s.last.Version, r.m.Release, was)
	}

	if err := r.checkBeforeDeploy(ctx, ch, vals, s); err != nil {
		return protocol.HelmReleaseOutputs{}, err
	}
	var rel *release.Release
	if s.deployed == nil {
		if len(s.history) > 0 {
			// Only failed or uninstalled revisions: start afresh.
			fmt.Fprintf(r.out, "outpost: release %s has no deployed revision: removing its %d failed revision(s) first\n",
				r.m.Release, len(s.history))
			if err := r.runUninstall(); err != nil {
				return protocol.HelmReleaseOutputs{}, fmt.Errorf("removing the failed revisions of release %s: %w", r.m.Release, err)
			}
		}
		rel, err = r.install(ctx, ch, vals)
	} else {
		rel, err = r.upgrade(ctx, ch, vals, s.deployed)
	}
	if err != nil {
		return protocol.HelmReleaseOutputs{}, err
	}
	objs, err := parseManifest(rel.Manifest, r.m.Namespace, r.mapper)
	if err != nil {
		return protocol.HelmReleaseOutputs{}, err
	}
	if s.deployed != nil {
		if err := r.live.repairDrift(ctx, r.out, objs); err != nil {
			return protocol.HelmReleaseOutputs{}, fmt.Errorf("release %s revision %d: %w", rel.Name, rel.Version, err)
		}
	}
	fmt.Fprintf(r.out, "outpost: release %s revision %d %s (%d objects)\n", rel.Name, rel.Version, rel.Info.Status, len(objs))
	return protocol.HelmReleaseOutputs{
		Release: rel.Name, Namespace: rel.Namespace, Revision: rel.Version, Status: rel.Info.Status.String(),
		Chart: rel.Chart.Metadata.Name + "-" + rel.Chart.Metadata.Version, AppVersion: rel.Chart.Metadata.AppVersion,
		Objects: helmObjects(objs), Notes: rel.Info.Notes,
	}, nil
}

func (r *releaseJob) install(ctx context.Context, ch *chart.Chart, vals map[string]any) (*release.Release, error) {
	in := r.newInstall(ctx, true)
	in.CreateNamespace = r.m.CreateNamespace
	in.Wait, in.WaitForJobs = r.m.Wait, r.m.Wait
	rel, err := in.RunWithContext(ctx, ch, vals)
	if err == nil {
		return rel, nil
	}
	err = fmt.Errorf("installing release %s: %w", r.m.Release, err)
	// helm records a release once its objects are about to be created;
	// what it created then goes with it.
	s, serr := r.state()
	if serr != nil {
		return nil, fmt.Errorf("%w; and then %w", err, serr)
	}
	if len(s.history) == 0 {
		return nil, err
	}
	if uerr := r.runUninstall(); uerr != nil {
		return nil, fmt.Errorf("%w; uninstalling the failed release failed too: %w", err, uerr)
	}
	return nil, fmt.Errorf("%w (the failed release was uninstalled)", err)
}

func (r *releaseJob) upgrade(ctx context.Context, ch *chart.Chart, vals map[string]any, deployed *release.Release) (*release.Release, error) {
	up := r.newUpgrade(ctx, true)
	up.Wait, up.WaitForJobs = r.m.Wait, r.m.Wait
	up.CleanupOnFail = true // objects the failed upgrade created go
	rel, err := up.RunWithContext(ctx, r.m.Release, ch, vals)
	if err == nil {
		return rel, nil
	}
	err = fmt.Errorf("upgrading release %s: %w", r.m.Release, err)
	s, serr := r.state()
	if serr != nil {
		return nil, fmt.Errorf("%w; and then %w", err, serr)
	}
	if s.last == nil || s.last.Version <= deployed.Version {
		// Nothing was recorded (a template that does not render, values
		// that the schema refuses): the release is as it was.
		return nil, err
	}
	rb := action.NewRollback(r.cfg)
	rb.Version = deployed.Version
	rb.Wait, rb.WaitForJobs = r.m.Wait, r.m.Wait
	rb.Timeout = r.timeout
	rb.CleanupOnFail = true
	rb.MaxHistory = MaxHistory
	if rerr := rb.Run(r.m.Release); rerr != nil {
		return nil, fmt.Errorf("%w; rolling back to revision %d failed too: %w", err, deployed.Version, rerr)
	}
	return nil, fmt.Errorf("%w (rolled back to revision %d)", err, deployed.Version)
}

// newInstall is helm's install of the release; copy: its images are copied
// into the install's registry (a dry run only resolves them).
func (r *releaseJob) newInstall(ctx context.Context, copy bool) *action.Install {
	in := action.NewInstall(r.cfg)
	in.ReleaseName, in.Namespace = r.m.Release, r.m.Namespace
	in.Timeout = r.timeout
	in.PostRenderer = r.postRenderer(ctx, copy)
	return in
}

// newUpgrade is helm's upgrade of the release; copy as newInstall's.
func (r *releaseJob) newUpgrade(ctx context.Context, copy bool) *action.Upgrade {
	up := action.NewUpgrade(r.cfg)
	up.Namespace = r.m.Namespace
	up.Timeout = r.timeout
	up.PostRenderer = r.postRenderer(ctx, copy)
	up.MaxHistory = MaxHistory
	// The manifest's values are all the values: nothing is reused from the
	// previous revision.
	up.ResetValues = true
	return up
}

// plan renders what a deploy would, without changing anything (helm's
// server-side dry run: lookups and capabilities are the cluster's), and
// compares its objects with the deployed revision's.
func (r *releaseJob) plan(ctx context.Context, ch *chart.Chart, vals map[string]any) (protocol.HelmPlanOutputs, error) {
	s, err := r.state()
	if err != nil {
		return protocol.HelmPlanOutputs{}, err
	}
	out := protocol.HelmPlanOutputs{Added: []protocol.HelmObject{}, Changed: []protocol.HelmObject{}, Removed: []protocol.HelmObject{},
		Drifted: []protocol.HelmObject{}}
	var before []object
	rel, err := r.dryRun(ctx, ch, vals, s)
	if err != nil {
		return out, err
	}
	if s.deployed == nil {
		out.Install = true
	} else {
		out.Revision = s.deployed.Version
		if before, err = parseManifest(s.deployed.Manifest, r.m.Namespace, r.mapper); err != nil {
			return out, err
		}
	}
	after, err := parseManifest(rel.Manifest, r.m.Namespace, r.mapper)
	if err != nil {
		return out, err
	}
	if out.Policies, err = r.policies.check(ctx, after); err != nil {
		return out, err
	}
	d, err := diffObjects(before, after)
	if err != nil {
		return out, err
	}
	out.HasChanges = d.hasChanges() || out.Install
	out.Diff = d.text
	out.Added = append(out.Added, d.added...)
	out.Changed = append(out.Changed, d.changed...)
	out.Removed = append(out.Removed, d.removed...)
	if s.deployed == nil {
		return out, nil
	}
	drift, err := r.live.drift(ctx, driftedOf(before, after))
	if err != nil {
		return out, fmt.Errorf("comparing release %s with the cluster: %w", r.m.Release, err)
	}
	if len(drift.objects) > 0 {
		fmt.Fprintf(r.out, "outpost: %d object(s) of revision %d changed in the cluster behind helm's back\n", len(drift.objects), out.Revision)
	}
	out.Drifted = append(out.Drifted, drift.helmObjects()...)
	out.Diff += drift.text
	out.HasChanges = out.HasChanges || len(drift.objects) > 0
	return out, nil
}

// uninstall removes the release and its objects; a release that does not
// exist is nothing to do.
func (r *releaseJob) uninstall() (protocol.HelmUninstallOutputs, error) {
	out := protocol.HelmUninstallOutputs{Release: r.m.Release, Namespace: r.m.Namespace}
	s, err := r.state()
	if err != nil {
		return out, err
	}
	if len(s.history) == 0 {
		fmt.Fprintf(r.out, "outpost: release %s does not exist in namespace %s: nothing to uninstall\n", r.m.Release, r.m.Namespace)
		return out, nil
	}
	objs, err := parseManifest(s.last.Manifest, r.m.Namespace, r.mapper)
	if err != nil {
		return out, err
	}
	if err := r.runUninstall(); err != nil {
		return out, fmt.Errorf("uninstalling release %s: %w", r.m.Release, err)
	}
	out.Uninstalled, out.Objects = true, helmObjects(objs)
	fmt.Fprintf(r.out, "outpost: release %s uninstalled (%d objects)\n", r.m.Release, len(objs))
	return out, nil
}

// runUninstall removes every revision of the release and its objects.
func (r *releaseJob) runUninstall() error {
	un := action.NewUninstall(r.cfg)
	un.Wait = r.m.Wait
	un.Timeout = r.timeout
	un.DeletionPropagation = "background"
	res, err := un.Run(r.m.Release)
	if err != nil {
		return err
	}
	if res != nil && res.Info != "" {
		fmt.Fprintln(r.out, "helm: "+res.Info)
	}
	return nil
}

// fitPlan keeps a plan's outputs under protocol.MaxOutputsBytes by cutting
// the diff (the job's logs have it whole).
func fitPlan(out protocol.HelmPlanOutputs) protocol.HelmPlanOutputs {
	b, err := json.Marshal(out)
	if err != nil || len(b) <= protocol.MaxOutputsBytes {
		return out
	}
	// A byte cut from the diff is at least a byte less of JSON.
	keep := len(out.Diff) - (len(b) - protocol.MaxOutputsBytes) - 200
	for keep > 0 && !utf8.RuneStart(out.Diff[keep]) {
		keep--
	}
	out.Diff = out.Diff[:max(keep, 0)] + "\n… (cut: the diff is too large for the job's outputs; the logs have it whole)\n"
	out.Truncated = true
	return out
}
