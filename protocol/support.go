package protocol

// JobTypeSupport collects a support bundle on the install's runner: the runner's recent log, the parts
// the control plane gives (job history, terraform resources), each helm release's status and history,
// and the events and recent container logs of the releases' namespaces, all redacted, as one tar.gz
// the runner uploads (PathJobBundle) before it completes the job.
const JobTypeSupport = "support"

// PathJobBundle receives a support job's archive: the raw tar.gz as the body, the attempt in the
// query (?attempt=N), the runner token as for every job call. The job ID takes the place of {id}.
const PathJobBundle = "/runner/v1/jobs/{id}/bundle"

// Files of a support job's directory.
const (
	// SupportRunnerLogFile is the runner's own recent log, which the runner writes into the job's
	// directory before it starts the job process.
	SupportRunnerLogFile = "runner.log"
	// SupportBundleFile is the archive the job process leaves for the runner to upload.
	SupportBundleFile = "bundle.tar.gz"
)

// DefaultSupportBundleMaxBytes is the default cap of a support bundle's archive.
const DefaultSupportBundleMaxBytes = 32 << 20

// SupportManifest is a fully rendered support job. It is stored with the job (sealed) and never put in
// Temporal history: Kubeconfig and Redact are secret.
type SupportManifest struct {
	// Kubeconfig is the install's cluster ("" when the install has none: the cluster parts then say so).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// Releases are the install's helm releases; their namespaces are the ones whose events and
	// container logs are collected.
	Releases []SupportRelease `json:"releases,omitempty"`
	// Files are parts the control plane wrote (name in the archive → content): the job history
	// summary and the terraform resources per workspace. They are redacted like every other part.
	Files map[string]string `json:"files,omitempty"`
	// Redact are the install's sensitive values (inputs and outputs): none of them may leave the
	// account. Credential patterns (tokens, keys, passwords) are redacted besides.
	Redact []string `json:"redact,omitempty"`
	// LogSinceSeconds and LogTailLines bound each container's log (defaults 3600 and 500).
	LogSinceSeconds int64 `json:"log_since_seconds,omitempty"`
	LogTailLines    int64 `json:"log_tail_lines,omitempty"`
	// MaxBytes caps the archive (default DefaultSupportBundleMaxBytes): a larger one fails the job.
	MaxBytes int64 `json:"max_bytes,omitempty"`
}

// SupportRelease names one helm release.
type SupportRelease struct {
	Component string `json:"component"`
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
}

// SupportOutputs are a support job's outputs: what the archive holds.
type SupportOutputs struct {
	// Parts are the archive's file names, in order.
	Parts  []string `json:"parts"`
	Bytes  int64    `json:"bytes"`
	SHA256 string   `json:"sha256"`
	// Unavailable names the parts that could not be collected, with why (also in the archive).
	Unavailable []string `json:"unavailable,omitempty"`
}

// JobTypeKubeLogs streams the events and container logs of one namespace (or one workload in it) since
// a time as the job's own log lines, so they follow like any job's logs.
const JobTypeKubeLogs = "kube_logs"

// KubeLogsManifest is a kube_logs job (stored with the job; Kubeconfig and Redact are secret).
type KubeLogsManifest struct {
	Kubeconfig string `json:"kubeconfig"`
	Namespace  string `json:"namespace"`
	// Workload narrows to the pods whose name starts with it (a Deployment's or a Pod's name).
	Workload     string   `json:"workload,omitempty"`
	SinceSeconds int64    `json:"since_seconds,omitempty"`
	TailLines    int64    `json:"tail_lines,omitempty"`
	Redact       []string `json:"redact,omitempty"`
}
