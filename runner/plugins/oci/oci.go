package oci

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/opencontainers/go-digest"
	"helm.sh/helm/v3/pkg/chart"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/dockerbuild"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// New returns an oci plugin for one job (of type protocol.JobTypeOCI): any
// operation but build_helm_chart.
func New() plugins.Plugin { return &plugin{} }

// ChartSaver packages a loaded chart into a .tgz in dir and returns its path:
// helm's chartutil.Save. It is passed in by the binary that builds charts
// (outpost-runner-helm), so that this package does not link chartutil, whose
// package initialisation (a JSON Schema compiler, the Kubernetes client's
// scheme) costs every process that links it ~10 ms.
type ChartSaver func(c *chart.Chart, dir string) (string, error)

// ChartBuilder returns the factory of the plugin of protocol.JobTypeHelmChart
// jobs, which packages charts with save: build_helm_chart only.
func ChartBuilder(save ChartSaver) plugins.Factory {
	return func() plugins.Plugin { return &plugin{saveChart: save} }
}

// ImageBuilder returns the factory of the plugin of
// protocol.JobTypeDockerImage jobs, which build images with build
// (engine.Build, passed in by outpost-runner-helm for the same reason as a
// ChartSaver: the Docker client and BuildKit): build_docker_image only.
func ImageBuilder(build dockerbuild.BuildFunc) plugins.Factory {
	return func() plugins.Plugin { return &plugin{buildImage: build} }
}

// heavy are the operations that run in a job type of their own, in
// outpost-runner-helm: by operation, that job type.
var heavy = map[string]string{
	protocol.OCIBuildHelmChart:   protocol.JobTypeHelmChart,
	protocol.OCIBuildDockerImage: protocol.JobTypeDockerImage,
}

type plugin struct {
	m        protocol.OCIManifest
	scrub    *ociclient.Scrubber
	artifact *protocol.Artifact
	plan     *protocol.OCISyncPlanOutputs // a sync_plan's outputs, instead of artifact
	// saveChart is set in a helm_chart job: it builds charts, and only them;
	// buildImage in a docker_image job, which builds images and only them.
	saveChart  ChartSaver
	buildImage dockerbuild.BuildFunc
}

// jobType is the job type the plugin runs, and the one operation it takes
// ("" in an oci job: every operation but the heavy ones).
func (p *plugin) jobType() (typ, only string) {
	switch {
	case p.saveChart != nil:
		return protocol.JobTypeHelmChart, protocol.OCIBuildHelmChart
	case p.buildImage != nil:
		return protocol.JobTypeDockerImage, protocol.OCIBuildDockerImage
	}
	return protocol.JobTypeOCI, ""
}

// takes says which of the manifest's optional fields an operation takes.
type takes struct{ component, source, image, docker, artifact bool }

var operations = map[string]takes{
	protocol.OCIBuildTerraformModule: {component: true, source: true},
	protocol.OCIBuildHelmChart:       {component: true, source: true},
	protocol.OCIBuildContainerImage:  {component: true, image: true},
	protocol.OCIBuildDockerImage:     {component: true, source: true, docker: true},
	protocol.OCISync:                 {artifact: true},
	protocol.OCISyncPlan:             {artifact: true},
}

// validTag is the OCI distribution spec's tag grammar.
var validTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

const operationList = "build_terraform_module, build_helm_chart, build_container_image, build_docker_image, sync or sync_plan"

func (p *plugin) Validate(manifest json.RawMessage) error {
	err := plugins.DecodeManifest(manifest, &p.m)
	p.scrub = scrubberOf(p.m)
	if err == nil {
		err = p.validate()
	}
	return p.scrub.Error(err)
}

// scrubberOf scrubs every credential of the manifest.
func scrubberOf(m protocol.OCIManifest) *ociclient.Scrubber {
	creds := []string{m.Destination.Registry.Username, m.Destination.Registry.Password}
	if m.Image != nil {
		creds = append(creds, m.Image.Username, m.Image.Password)
	}
	if m.Artifact != nil {
		creds = append(creds, m.Artifact.Registry.Username, m.Artifact.Registry.Password)
	}
	if m.Docker != nil {
		for _, r := range m.Docker.Registries {
			creds = append(creds, r.Username, r.Password)
		}
	}
	return ociclient.NewScrubber(creds...)
}

func (p *plugin) validate() error {
	m := &p.m
	t, ok := operations[m.Operation]
	typ, only := p.jobType()
	switch {
	case m.Operation == "":
		return fmt.Errorf("operation: required (%s)", operationList)
	case !ok:
		return fmt.Errorf("operation: must be %s, got %q", operationList, m.Operation)
	case only != "" && m.Operation != only:
		want := cmp.Or(heavy[m.Operation], protocol.JobTypeOCI)
		return fmt.Errorf("operation: a %s job takes %s, got %q (job type %s runs it)", typ, only, m.Operation, want)
	case only == "" && heavy[m.Operation] != "":
		return fmt.Errorf("operation: %s runs in a %s job (in %s), not in an %s job",
			m.Operation, heavy[m.Operation], "outpost-runner-helm", protocol.JobTypeOCI)
	}
	for _, f := range []struct {
		field          string
		takes, present bool
	}{
		{"component", t.component, m.Component != ""},
		{"source", t.source, len(m.Source) > 0},
		{"image", t.image, m.Image != nil},
		{"docker", t.docker, m.Docker != nil},
		{"artifact", t.artifact, m.Artifact != nil},
	} {
		switch {
		case f.takes && !f.present:
			return fmt.Errorf("%s: required for %s", f.field, m.Operation)
		case !f.takes && f.present:
			return fmt.Errorf("%s: %s takes none", f.field, m.Operation)
		}
	}
	if len(m.Images) > 0 && m.Operation != protocol.OCIBuildHelmChart {
		return fmt.Errorf("images: %s takes none (a chart's build copies the images it lists)", m.Operation)
	}
	for i, s := range m.Images {
		if _, err := name.ParseReference(s); err != nil {
			return fmt.Errorf("images[%d]: %q: %w", i, s, err)
		}
	}
	if err := checkRepository("destination", m.Destination.Registry, m.Destination.Repository); err != nil {
		return err
	}
	if m.Destination.Tag != "" {
		if !validTag.MatchString(m.Destination.Tag) {
			return fmt.Errorf("destination.tag: %q is not a valid tag (letters, digits, '_', '.', '-'; at most 128)", m.Destination.Tag)
		}
	}
	switch m.Operation {
	case protocol.OCIBuildTerraformModule:
		return checkSource(m.Source, ".tf or .tf.json file", func(n string) bool {
			return strings.HasSuffix(n, ".tf") || strings.HasSuffix(n, ".tf.json")
		})
	case protocol.OCIBuildHelmChart:
		return checkSource(m.Source, "Chart.yaml", func(n string) bool { return n == "Chart.yaml" })
	case protocol.OCIBuildContainerImage:
		if m.Image.Reference == "" {
			return errors.New("image.reference: required (an image by tag or digest)")
		}
		if _, err := imageReference(*m.Image); err != nil {
			return fmt.Errorf("image.reference: %w", err)
		}
	case protocol.OCIBuildDockerImage:
		if d := m.Docker.Dockerfile; d == "" || path.IsAbs(d) || path.Clean(d) != d || d == ".." || strings.HasPrefix(d, "../") {
			return fmt.Errorf("docker.dockerfile: must be a path inside the context, got %q", d)
		}
	case protocol.OCISync, protocol.OCISyncPlan:
		if err := checkRepository("artifact", m.Artifact.Registry, m.Artifact.Repository); err != nil {
			return err
		}
		if _, err := digest.Parse(m.Artifact.Digest); err != nil {
			return fmt.Errorf("artifact.digest: must be a digest (sha256:<64 hex digits>), got %q", m.Artifact.Digest)
		}
	}
	return nil
}

func checkRepository(field string, access protocol.RegistryAccess, repository string) error {
	if err := ociclient.CheckAddress(access.Address); err != nil {
		return fmt.Errorf("%s.registry.address: %w", field, err)
	}
	if repository == "" {
		return fmt.Errorf("%s.repository: required", field)
	}
	if _, err := ociclient.Repository(access, repository); err != nil {
		return fmt.Errorf("%s.repository: %w", field, err)
	}
	return nil
}

func checkSource(archive []byte, want string, match func(string) bool) error {
	found, err := hasRootFile(archive, match)
	switch {
	case err != nil:
		return fmt.Errorf("source: %w", err)
	case !found:
		return fmt.Errorf("source: the archive holds no %s at its root", want)
	}
	return nil
}

// imageReference parses an external image's reference the way docker
// does: "nginx:1.27" is docker.io/library/nginx:1.27.
func imageReference(img protocol.OCIImageSource) (name.Reference, error) {
	return name.ParseReference(img.Reference)
}

func (p *plugin) Execute(ctx context.Context, run plugins.Run) (int, error) {
	log := p.scrub.Writer(run.Stdout)
	start := time.Now()
	dst, err := ociclient.NewTarget(p.m.Destination)
	if err != nil {
		return 0, p.scrub.Error(err)
	}
	if p.m.Operation == protocol.OCISyncPlan {
		plan, err := syncPlan(ctx, log, *p.m.Artifact, dst)
		if err != nil {
			return 0, p.scrub.Error(err)
		}
		p.plan = &plan
		return 0, nil
	}
	var art protocol.Artifact
	switch p.m.Operation {
	case protocol.OCIBuildTerraformModule:
		art, err = p.buildTerraformModule(ctx, log, run, dst)
	case protocol.OCIBuildHelmChart:
		art, err = p.buildHelmChart(ctx, log, run.Dir, dst)
	case protocol.OCIBuildContainerImage:
		art, err = p.buildContainerImage(ctx, log, dst)
	case protocol.OCIBuildDockerImage:
		art, err = p.buildDockerImage(ctx, log, run.Dir, dst)
	case protocol.OCISync:
		art, err = p.sync(ctx, log, dst)
	}
	if err != nil {
		return 0, p.scrub.Error(err)
	}
	p.artifact = &art
	fmt.Fprintf(log, "outpost: %s@%s (%s, %d bytes) in %s\n",
		dst.Name, art.Digest, art.MediaType, art.Size, time.Since(start).Round(time.Millisecond))
	return 0, nil
}

func (p *plugin) Outputs() (json.RawMessage, error) {
	if p.plan != nil {
		return json.Marshal(p.plan)
	}
	if p.artifact == nil {
		return nil, nil
	}
	return json.Marshal(p.artifact)
}

func (p *plugin) Cleanup() error { return nil }

// logf writes one line of the job's log.
func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "outpost: "+format+"\n", args...)
}
