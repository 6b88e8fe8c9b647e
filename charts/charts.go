package charts

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"strings"

	"github.com/outpost-dev/outpost/internal/tarball"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// RunnerChartName is the runner chart's name and directory.
const RunnerChartName = "outpost-runner"

// DefaultRunnerChartRef is where the project publishes the runner chart.
const DefaultRunnerChartRef = "oci://ghcr.io/outpost-dev/charts/" + RunnerChartName

// DefaultRunnerRelease is the release name of a runner install.
const DefaultRunnerRelease = RunnerChartName

// ControlPlaneChartName is the control plane's chart's name and directory.
const ControlPlaneChartName = "outpost"

//go:embed all:outpost-runner all:outpost
var files embed.FS

// RunnerChart is the runner chart's directory: Chart.yaml, values.yaml,
// templates/, README.md.
func RunnerChart() fs.FS { return chartFS(RunnerChartName) }

// ControlPlaneChart is the control plane's chart's directory (api and
// worker Deployments, their Services, the migration hook): Chart.yaml,
// values.yaml, values.schema.json, templates/.
func ControlPlaneChart() fs.FS { return chartFS(ControlPlaneChartName) }

func chartFS(name string) fs.FS {
	sub, err := fs.Sub(files, name)
	if err != nil {
		panic(err) // the directory is embedded
	}
	return sub
}

// RunnerChartVersion is the runner chart's version (its Chart.yaml).
var RunnerChartVersion = chartVersion(RunnerChartName)

// ControlPlaneChartVersion is the control plane chart's version.
var ControlPlaneChartVersion = chartVersion(ControlPlaneChartName)

func chartVersion(name string) string {
	b, err := fs.ReadFile(chartFS(name), "Chart.yaml")
	if err != nil {
		panic(err)
	}
	var c struct {
		Version string `json:"version"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil || c.Version == "" {
		panic(fmt.Sprintf("charts: %s/Chart.yaml: no version (%v)", name, err))
	}
	return c.Version
}

// RunnerChartArchive is the runner chart as `helm package` writes it: a
// gzipped tar with the files under outpost-runner/. It is the same bytes for
// the same chart (sorted entries, no times), so it can be a helm job's
// chart_archive or be pushed to a registry as an artifact of its own.
func RunnerChartArchive() ([]byte, error) { return chartArchive(RunnerChartName) }

// ControlPlaneChartArchive is the control plane's chart as `helm package`
// writes it (files under outpost/), the same bytes for the same chart.
func ControlPlaneChartArchive() ([]byte, error) { return chartArchive(ControlPlaneChartName) }

func chartArchive(name string) ([]byte, error) {
	var buf bytes.Buffer
	w, err := tarball.NewWriter(&buf, tarball.Format{}, nil)
	if err == nil {
		err = errors.Join(w.AddFS(chartFS(name), tarball.Tree{Prefix: name}), w.Close())
	}
	if err != nil {
		return nil, fmt.Errorf("packing the %s chart: %w", name, err)
	}
	return buf.Bytes(), nil
}

// RunnerInstall is what a `helm install` of the runner chart needs. The
// token Secret must exist in Namespace first, holding the runner's token
// under the key "token":
//
//	kubectl create namespace NAMESPACE
//	kubectl create secret generic SECRET -n NAMESPACE --from-literal=token=oprg_…
type RunnerInstall struct {
	// GatewayURL is the control plane's gateway (http or https).
	GatewayURL string
	// TokenSecret names the Secret holding the runner's token.
	TokenSecret string
	// Namespace is the runner's own namespace (created when missing).
	Namespace string
	// Image is the runner's image: repository[:tag][@sha256:digest].
	Image string
	// Release is the release's name (default DefaultRunnerRelease); Chart is
	// the chart reference (default DefaultRunnerChartRef); Version the
	// chart's version (default RunnerChartVersion).
	Release, Chart, Version string
}

// Args returns the helm command line, one argument each: "helm", "install",
// ….
func (in RunnerInstall) Args() ([]string, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	repo, tag, digest := splitImage(in.Image)
	args := []string{"helm", "install", or(in.Release, DefaultRunnerRelease), or(in.Chart, DefaultRunnerChartRef),
		"--version", or(in.Version, RunnerChartVersion),
		"--namespace", in.Namespace, "--create-namespace",
		"--set-string", "gateway.url=" + setValue(in.GatewayURL),
		"--set-string", "token.existingSecret=" + setValue(in.TokenSecret),
		"--set-string", "image.repository=" + setValue(repo),
	}
	if tag != "" {
		args = append(args, "--set-string", "image.tag="+setValue(tag))
	}
	if digest != "" {
		args = append(args, "--set-string", "image.digest="+setValue(digest))
	}
	return args, nil
}

// Command returns the helm command line as one line for a shell, with every
// argument that needs it quoted.
func (in RunnerInstall) Command() (string, error) {
	args, err := in.Args()
	if err != nil {
		return "", err
	}
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " "), nil
}

var (
	imagePattern = regexp.MustCompile(`^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$`)
	safeArg      = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)
)

func (in RunnerInstall) validate() error {
	u, err := url.Parse(in.GatewayURL)
	switch {
	case in.GatewayURL == "":
		return errors.New("gateway URL: required")
	case err != nil:
		return fmt.Errorf("gateway URL: %w", err)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("gateway URL %q: must be an http(s) URL with a host", in.GatewayURL)
	}
	if errs := validation.IsDNS1123Subdomain(in.TokenSecret); len(errs) > 0 {
		return fmt.Errorf("token secret %q: %s", in.TokenSecret, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(in.Namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", in.Namespace, strings.Join(errs, "; "))
	}
	if in.Release != "" {
		if errs := validation.IsDNS1123Label(in.Release); len(errs) > 0 {
			return fmt.Errorf("release %q: %s", in.Release, strings.Join(errs, "; "))
		}
	}
	if !imagePattern.MatchString(in.Image) {
		return fmt.Errorf("image %q: must be repository[:tag][@sha256:digest]", in.Image)
	}
	return nil
}

// splitImage splits repository[:tag][@digest].
func splitImage(image string) (repo, tag, digest string) {
	repo, digest, _ = strings.Cut(image, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, tag = repo[:i], repo[i+1:]
	}
	return repo, tag, digest
}

// setValue escapes a value for helm's --set-string, where "," separates
// values and "\" escapes.
func setValue(v string) string {
	return strings.NewReplacer(`\`, `\\`, `,`, `\,`).Replace(v)
}

// shellQuote quotes a for a POSIX shell when it holds anything but safe
// characters.
func shellQuote(a string) string {
	if safeArg.MatchString(a) {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
