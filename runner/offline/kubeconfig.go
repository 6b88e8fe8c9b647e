package offline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/jobmanifest"
)

// kubeconfig is the cluster a chart deploys to: the one the app names (the
// component's kubeconfig, else the sandbox's output), as connected, else —
// when the app names none — the machine's (--kubeconfig, KUBECONFIG), read
// only then.
func (d *deployment) kubeconfig(data appconfig.Data, component string) (string, error) {
	sandbox, err := d.sandboxOutputs()
	if err != nil {
		return "", err
	}
	kc, err := jobmanifest.Kubeconfig(d.cfg, data, component, sandbox)
	if err != nil || kc != "" {
		return kc, err
	}
	if kc, err = machineKubeconfig(d.o.KubeconfigFile); err != nil {
		return "", fmt.Errorf("component %s: %s: %w", component, kubeconfigSource(d.o.KubeconfigFile), err)
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
		return "", fmt.Errorf("reading it: %w", err)
	}
	if cfg.CurrentContext == "" || cfg.Contexts[cfg.CurrentContext] == nil {
		return "", errors.New("no current context (a kubeconfig file whose current-context names one of its contexts)")
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		return "", fmt.Errorf("inlining the files it names: %w", err)
	}
	raw, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", fmt.Errorf("writing it for the job: %w", err)
	}
	return string(raw), nil
}

// kubeconfigSource names where the machine's kubeconfig comes from.
func kubeconfigSource(flag string) string {
	if flag != "" {
		return "--kubeconfig " + flag
	}
	return clientcmd.RecommendedConfigPathEnvVar + " " + os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
}
