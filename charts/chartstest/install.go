package chartstest

import (
	"bytes"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/outpost-dev/outpost/charts"
)

// InstallRunner is `helm install outpost-runner <the runner chart> -n ns
// --create-namespace` with vals, on the cluster kubeconfig names.
func InstallRunner(kubeconfig, ns string, vals map[string]any) error {
	ch, err := RunnerChart()
	if err != nil {
		return err
	}
	h, err := New(kubeconfig, ns)
	if err != nil {
		return err
	}
	_, err = h.Install(charts.DefaultRunnerRelease, ch, vals, 0)
	return err
}

// RunnerChart and ControlPlaneChart load the embedded charts as helm does a
// packaged one.
func RunnerChart() (*chart.Chart, error) { return load(charts.RunnerChartArchive) }

// ControlPlaneChart: see RunnerChart.
func ControlPlaneChart() (*chart.Chart, error) { return load(charts.ControlPlaneChartArchive) }

func load(archive func() ([]byte, error)) (*chart.Chart, error) {
	b, err := archive()
	if err != nil {
		return nil, err
	}
	ch, err := loader.LoadArchive(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("loading a chart: %w", err)
	}
	return ch, nil
}

// Helm runs helm's actions in one namespace of a cluster, as the helm
// command does (release records in Secrets).
type Helm struct {
	cfg *action.Configuration
	ns  string
}

// New is helm with --kubeconfig kubeconfig --namespace ns.
func New(kubeconfig, ns string) (*Helm, error) {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		return nil, fmt.Errorf("helm configuration: %w", err)
	}
	return &Helm{cfg: cfg, ns: ns}, nil
}

// Install is `helm install release <ch> --create-namespace` with vals; with
// a timeout, `--wait --timeout` too. Hooks (a Job) are waited for in any
// case, for at most five minutes without a timeout.
func (h *Helm) Install(release string, ch *chart.Chart, vals map[string]any, timeout time.Duration) (int, error) {
	in := action.NewInstall(h.cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = release, h.ns, true
	in.Wait, in.Timeout = timeout > 0, hookTimeout(timeout)
	rel, err := in.Run(ch, vals)
	if err != nil {
		return 0, err
	}
	return rel.Version, nil
}

// Upgrade is `helm upgrade release <ch>` with vals (not reusing the
// release's); with a timeout, `--wait --timeout` too. It returns the new
// revision.
func (h *Helm) Upgrade(release string, ch *chart.Chart, vals map[string]any, timeout time.Duration) (int, error) {
	up := action.NewUpgrade(h.cfg)
	up.Namespace = h.ns
	up.Wait, up.Timeout = timeout > 0, hookTimeout(timeout)
	rel, err := up.Run(release, ch, vals)
	if err != nil {
		return 0, err
	}
	return rel.Version, nil
}

// Rollback is `helm rollback release revision`; with a timeout, `--wait
// --timeout` too.
func (h *Helm) Rollback(release string, revision int, timeout time.Duration) error {
	rb := action.NewRollback(h.cfg)
	rb.Version, rb.Wait, rb.Timeout = revision, timeout > 0, hookTimeout(timeout)
	return rb.Run(release)
}

func hookTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return 5 * time.Minute
	}
	return d
}

// Template is `helm template release <ch> -n ns` with vals, for a cluster
// of kubeVersion (as --kube-version): the manifests, or the error helm
// gives (a value the schema refuses, a required one missing).
func Template(ch *chart.Chart, release, ns, kubeVersion string, vals map[string]any) (string, error) {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		return "", err
	}
	in := action.NewInstall(&action.Configuration{})
	in.ReleaseName, in.Namespace = release, ns
	in.DryRun, in.ClientOnly, in.Replace = true, true, true
	in.KubeVersion = kv
	rel, err := in.Run(ch, vals)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	b.WriteString(rel.Manifest)
	for _, h := range rel.Hooks {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return b.String(), nil
}
