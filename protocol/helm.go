package protocol

import "encoding/json"

// JobTypeHelm runs helm (the helm.sh/helm/v3 SDK) on a chart against the
// install's cluster: plan, deploy or uninstall of one release.
const JobTypeHelm = "helm"

// Helm operations.
const (
	HelmPlan      = "plan"      // dry-run upgrade (or install), diffed against the release → HelmPlanOutputs
	HelmDeploy    = "deploy"    // install, or upgrade when the release exists; atomic → HelmReleaseOutputs
	HelmUninstall = "uninstall" // remove the release and its objects; a missing release is success → HelmUninstallOutputs
)

// HelmManifest is a fully rendered helm job: the runner renders nothing. It
// is stored with the job and never put in Temporal history (the kubeconfig,
// the registry credential and the values may be secret).
type HelmManifest struct {
	Operation string `json:"operation"`
	// Kubeconfig is the content of a kubeconfig file for the install's
	// cluster (secret). Its current context is used.
	Kubeconfig string `json:"kubeconfig"`
	// Release is the helm release's name; Namespace is its namespace, where
	// helm keeps the release (as Secrets) and where namespaced objects
	// without a namespace of their own go.
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	// CreateNamespace creates Namespace when it does not exist (deploy).
	CreateNamespace bool `json:"create_namespace,omitempty"`
	// Chart is the chart's OCI artifact (helm's chart media types), pulled by
	// digest. Exactly one of Chart and ChartArchive is set (not for an
	// uninstall, which needs no chart).
	Chart *ArtifactRef `json:"chart,omitempty"`
	// ChartArchive is the chart directory as a gzipped tar archive (what
	// `helm package` writes), for tests and local use.
	ChartArchive []byte `json:"chart_archive,omitempty"`
	// ValuesFiles are the contents of YAML values files, merged in order
	// over the chart's values.yaml (as `helm -f a.yaml -f b.yaml`).
	ValuesFiles []string `json:"values_files,omitempty"`
	// Values is a JSON object rendered from the component's config, merged
	// last, over the values files.
	Values json.RawMessage `json:"values,omitempty"`
	// SensitiveValues are the keys of Values that are sensitive ("values.db.password", covering what
	// lies within): the runner shows them only as "(sensitive value)", in diffs, notes, logs and errors.
	SensitiveValues []string `json:"sensitive_values,omitempty"`
	// TimeoutMS bounds each Kubernetes operation helm waits for (default 5
	// minutes).
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// Wait makes a deploy wait until the release's objects are ready (Pods,
	// Deployments' replicas, Services' addresses, …), and an uninstall until
	// they are gone. Without it, the API server's acceptance is enough.
	Wait bool `json:"wait,omitempty"`
	// Policies are the vendor's plan policies and what the install is; the
	// runner checks the chart's rendered objects against them and its
	// customer's own before a plan is shown or a deploy changes anything.
	Policies *PlanPolicies `json:"policies,omitempty"`
	// Images, when set, relocates the images the chart runs into the
	// install's registry (plan and deploy): see HelmImages.
	Images *HelmImages `json:"images,omitempty"`
}

// HelmImages relocates the images a chart runs: each is resolved to its
// digest at its source registry, copied by digest into Registry at
// <Repository>/<source host>/<source path> (a deploy copies; a plan only
// resolves), and the rendered manifests' containers, initContainers and
// ephemeralContainers point at <Registry.Address>/<that path>@sha256:….
type HelmImages struct {
	// Registry is the install's registry (a credential that may push).
	Registry RegistryAccess `json:"registry"`
	// Repository is the prefix of the images' repositories there
	// ("outpost/<component>/images").
	Repository string `json:"repository"`
	// Images are full references ("docker.io/library/nginx:1.27"): only
	// these are copied (whether the manifests name them or not) and
	// rewritten. Empty: every image the rendered manifests name, except
	// those already in Registry.
	Images []string `json:"images,omitempty"`
	// Bundled are listed images Registry holds already, by digest, where
	// relocation puts them (an offline deploy loaded them from its
	// bundle): by listed reference, the digest. Their source is not asked.
	Bundled map[string]string `json:"bundled,omitempty"`
	// Offline: no image is fetched from its source registry. An image the
	// manifests name that is neither Bundled nor in Registry fails the job.
	Offline bool `json:"offline,omitempty"`
}

// HelmObject names one Kubernetes object of a release.
type HelmObject struct {
	APIVersion string `json:"api_version"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// HelmReleaseOutputs are a deploy job's outputs: the release as it is now.
type HelmReleaseOutputs struct {
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	Revision  int    `json:"revision"`
	// Status is helm's status of the revision ("deployed").
	Status     string `json:"status"`
	Chart      string `json:"chart"` // name-version
	AppVersion string `json:"app_version,omitempty"`
	// Objects are the objects the release's manifest holds (hooks aside).
	Objects []HelmObject `json:"objects"`
	// Notes are the chart's rendered NOTES.txt.
	Notes string `json:"notes,omitempty"`
}

// HelmPlanOutputs are a plan job's outputs: what a deploy with the same
// manifest would change in the release's objects, the chart's changes and
// the cluster's drift. HasChanges is true when either is not empty.
type HelmPlanOutputs struct {
	HasChanges bool `json:"has_changes"`
	// Install says there is no deployed release yet: a deploy installs it.
	Install bool `json:"install,omitempty"`
	// Revision is the deployed revision the plan compares with (0: none).
	Revision int `json:"revision"`
	// Diff is a unified diff per changed object as YAML with sorted keys, "--- a/<Kind>/<namespace>/<name>"
	// ("/dev/null": added or removed); Secrets' values show as "(sensitive value[, changed])".
	//
	// Live drift follows the chart's changes: "--- live/<Kind>/<namespace>/<name>" (or "/dev/null": deleted
	// in the cluster) to "+++ b/…", what a forced server-side apply of the deployed revision's object would
	// make of the live one (a dry run, as `kubectl diff`), less the API server's bookkeeping and status.
	Diff    string       `json:"diff"`
	Added   []HelmObject `json:"added"`
	Changed []HelmObject `json:"changed"`
	Removed []HelmObject `json:"removed"`
	// Drifted are the deployed revision's objects (those the new one keeps) that were changed or deleted
	// through the API server behind helm's back: a field the release sets differs, or the object is gone.
	// Fields the release does not set (a controller's annotation) are not drift. A deploy puts them back.
	Drifted []HelmObject `json:"drifted"`
	// Truncated says Diff was cut to keep the outputs under MaxOutputsBytes
	// (the job's logs have it whole).
	Truncated bool `json:"truncated,omitempty"`
	// Policies are what each plan policy said of the rendered objects.
	Policies []PolicyResult `json:"policies,omitempty"`
}

// HelmUninstallOutputs are an uninstall job's outputs.
type HelmUninstallOutputs struct {
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	// Uninstalled is false when there was no such release (nothing to do).
	Uninstalled bool `json:"uninstalled"`
	// Objects are the objects the uninstall deleted.
	Objects []HelmObject `json:"objects,omitempty"`
}
