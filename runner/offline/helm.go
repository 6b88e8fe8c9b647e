package offline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
)

// helm deploys a helm_chart component as the connected runner does, in a
// helm deploy job: its chart from its build in the install's registry (the
// sync step loaded it there), its values and images as jobmanifest renders
// them for the control plane, into the cluster kubeconfig names.
func (d *deployment) helm(ctx context.Context, st *protocol.OfflineStep) error {
	name := st.Component
	chart, err := d.artifact(name)
	if err != nil {
		return err
	}
	data, err := d.data()
	if err != nil {
		return err
	}
	kubeconfig, err := d.kubeconfig(data, name)
	if err != nil {
		return err
	}
	m, err := jobmanifest.HelmRelease(d.cfg, name, protocol.HelmDeploy, kubeconfig)
	if err != nil {
		return err
	}
	if _, err := jobmanifest.HelmChart(d.cfg, data, name, *chart, &m); err != nil {
		return err
	}
	m.Policies = jobmanifest.PlanPolicies(d.cfg, d.inst, name, chart.Registry.Address)
	res, err := d.runJob(ctx, st, protocol.JobTypeHelm, m)
	if err != nil {
		return err
	}
	if res.Status != protocol.StatusSucceeded {
		return errors.New(res.Error)
	}
	var out protocol.HelmReleaseOutputs
	if err := json.Unmarshal(res.Outputs, &out); err != nil {
		return fmt.Errorf("component %s: the deploy's outputs: %w", name, err)
	}
	return d.recordValues(st, jobmanifest.HelmOutputs(out))
}

// kubeconfig is the cluster a chart deploys to: the one the app names (the
// component's kubeconfig, else the sandbox's output), as connected, else
// the machine's (--kubeconfig, KUBECONFIG).
func (d *deployment) kubeconfig(data appconfig.Data, component string) (string, error) {
	sandbox, err := d.sandboxOutputs()
	if err != nil {
		return "", err
	}
	kc, err := jobmanifest.Kubeconfig(d.cfg, data, component, sandbox)
	switch {
	case err != nil:
		return "", err
	case kc == "":
		kc = d.o.Kubeconfig
	}
	if kc == "" {
		return "", fmt.Errorf("component %s: no cluster to deploy to: the component sets no kubeconfig, the sandbox has no %q output, "+
			"and neither --kubeconfig nor KUBECONFIG names a kubeconfig file on this machine", component, jobmanifest.OutputKubeconfig)
	}
	return kc, nil
}

// machineKubeconfig reads the kubeconfig file path names, else those
// KUBECONFIG lists (merged as kubectl merges them), with the files it
// refers to inlined, since a job runs in a directory of its own; "" when
// neither is set.
func machineKubeconfig(path string) (string, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	if path == "" {
		env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
		if env == "" {
			return "", nil
		}
		rules.Precedence = filepath.SplitList(env)
	}
	cfg, err := rules.Load()
	if err != nil {
		return "", err
	}
	if cfg.CurrentContext == "" || cfg.Contexts[cfg.CurrentContext] == nil {
		return "", errors.New("no current context (a kubeconfig file whose current-context names one of its contexts)")
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		return "", err
	}
	raw, err := clientcmd.Write(*cfg)
	return string(raw), err
}
