package chartstest

import (
	"bytes"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/outpost-dev/outpost/charts"
)

// InstallRunner is `helm install outpost-runner <the runner chart> -n ns
// --create-namespace` with vals, on the cluster kubeconfig names.
func InstallRunner(kubeconfig, ns string, vals map[string]any) error {
	archive, err := charts.RunnerChartArchive()
	if err != nil {
		return err
	}
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return fmt.Errorf("loading the runner chart: %w", err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		return fmt.Errorf("helm configuration: %w", err)
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = charts.DefaultRunnerRelease, ns, true
	_, err = in.Run(ch, vals)
	return err
}
