package jobmanifest

import (
	"encoding/json"
	"fmt"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
)

// OutputKubeconfig is the sandbox output holding a kubeconfig for the
// install's cluster, where helm_chart components deploy.
const OutputKubeconfig = "kubeconfig"

// helmChart is a step's helm_chart component.
func helmChart(cfg *appconfig.Config, step string) (*appconfig.HelmChart, error) {
	c, ok := cfg.Component(step)
	if !ok || c.Helm == nil {
		return nil, &Error{Kind: KindInvalidConfig, Step: step, Err: fmt.Errorf("no helm_chart component %s in the app config", step)}
	}
	return c.Helm, nil
}

// Kubeconfig is the kubeconfig of the cluster a helm_chart step deploys
// to: its kubeconfig template rendered, else the sandbox's kubeconfig
// output (sandbox: the sandbox's outputs); "" when neither names one. An
// output that is not a non-empty string is an error naming it.
func Kubeconfig(cfg *appconfig.Config, data appconfig.Data, step string, sandbox map[string]protocol.TerraformOutput) (string, error) {
	if _, err := helmChart(cfg, step); err != nil {
		return "", err
	}
	kc, err := cfg.RenderHelmKubeconfig(step, data)
	if err != nil {
		return "", &Error{Kind: KindRender, Step: "the kubeconfig of " + step, Err: err}
	}
	if o, ok := sandbox[OutputKubeconfig]; ok && kc == "" {
		if err := json.Unmarshal(o.Value, &kc); err != nil || kc == "" {
			return "", &Error{Kind: KindBadOutput, Step: step, Err: fmt.Errorf(
				"component %s: the sandbox's %q output is not a kubeconfig (want a non-empty string)", step, OutputKubeconfig)}
		}
	}
	return kc, nil
}

// HelmRelease is a helm_chart step's job manifest for op, but for what
// HelmChart sets and the plan policies: its release and how helm waits.
func HelmRelease(cfg *appconfig.Config, step, op, kubeconfig string) (protocol.HelmManifest, error) {
	h, err := helmChart(cfg, step)
	if err != nil {
		return protocol.HelmManifest{}, err
	}
	return protocol.HelmManifest{Operation: op, Kubeconfig: kubeconfig, Release: h.ReleaseName, Namespace: h.Namespace,
		CreateNamespace: h.CreateNamespace, TimeoutMS: h.Timeout.Milliseconds(), Wait: h.Wait}, nil
}

// HelmChart sets what a helm_chart step's plan or deploy installs: the
// chart (its build, in the install's registry), its values rendered and
// values files, and, when the component relocates images, where they go
// (beside the chart). It returns the rendered values.
func HelmChart(cfg *appconfig.Config, data appconfig.Data, step string, chart protocol.ArtifactRef, m *protocol.HelmManifest) (*appconfig.RenderedValues, error) {
	h, err := helmChart(cfg, step)
	if err != nil {
		return nil, err
	}
	values, err := cfg.RenderHelmValues(step, data)
	if err != nil {
		return nil, &Error{Kind: KindRender, Step: step, Err: err}
	}
	if m.ValuesFiles, err = cfg.HelmValuesFiles(step); err != nil {
		return nil, &Error{Kind: KindRender, Step: step, Err: err}
	}
	m.Values, m.SensitiveValues, m.Chart = values.Values, values.Sensitive, &chart
	if h.RelocateImages {
		m.Images = &protocol.HelmImages{Registry: chart.Registry, Repository: ImagesRepository(step), Images: h.Images}
	}
	return values, nil
}

// ImagesRepository is the prefix of the repositories, in the install's
// registry, of the images a helm_chart step relocates.
func ImagesRepository(step string) string { return RepositoryPrefix + step + "/images" }

// HelmOutputs are a deployed helm_chart component's outputs, from its
// deploy job's: the release, and its objects as "Kind/namespace/name"
// ("Kind/name" when cluster-scoped).
func HelmOutputs(out protocol.HelmReleaseOutputs) map[string]appconfig.Value {
	objects := make([]string, len(out.Objects))
	for i, o := range out.Objects {
		objects[i] = o.Kind + "/" + o.Name
		if o.Namespace != "" {
			objects[i] = o.Kind + "/" + o.Namespace + "/" + o.Name
		}
	}
	return appconfig.HelmOutputValues(out.Release, out.Namespace, out.Revision, out.Status, objects)
}
