package helm

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/outpost-dev/outpost/protocol"
)

var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// validateChartRef checks a chart's OCI reference.
func validateChartRef(ref *protocol.ArtifactRef) error {
	switch {
	case ref.Registry.Address == "":
		return errors.New("chart.registry.address: required (host[:port])")
	case ref.Repository == "":
		return errors.New("chart.repository: required")
	case !digestPattern.MatchString(ref.Digest):
		return fmt.Errorf("chart.digest: must be sha256:<64 hex digits>, got %q", ref.Digest)
	case (ref.Registry.Username == "") != (ref.Registry.Password == ""):
		return errors.New("chart.registry: username and password go together")
	}
	return nil
}

// chartSource loads the chart a job deploys.
type chartSource interface {
	load(dir string) (*chart.Chart, error)
}

// archiveChart is a chart directory as a gzipped tar archive.
type archiveChart []byte

func (a archiveChart) load(string) (*chart.Chart, error) {
	c, err := loader.LoadArchive(bytes.NewReader(a))
	if err != nil {
		return nil, fmt.Errorf("chart_archive: %w", err)
	}
	return c, nil
}

// registryChart is a chart in an OCI registry, pulled by digest with helm's
// registry client. The credential goes to the client only: helm's
// credentials file is an empty one in the job's directory, so neither the
// runner's nor the user's docker or helm logins are read or written.
type registryChart struct{ ref *protocol.ArtifactRef }

func (r registryChart) reference() string {
	return r.ref.Registry.Address + "/" + r.ref.Repository + "@" + r.ref.Digest
}

func (r registryChart) load(dir string) (*chart.Chart, error) {
	creds := filepath.Join(dir, "registry-credentials.json")
	if err := os.WriteFile(creds, []byte("{}"), 0o600); err != nil {
		return nil, err
	}
	opts := []registry.ClientOption{registry.ClientOptCredentialsFile(creds)}
	if r.ref.Registry.PlainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	if r.ref.Registry.Username != "" {
		opts = append(opts, registry.ClientOptBasicAuth(r.ref.Registry.Username, r.ref.Registry.Password))
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("chart: registry client: %w", err)
	}
	res, err := client.Pull(r.reference(), registry.PullOptWithChart(true))
	if err != nil {
		return nil, fmt.Errorf("chart: pulling %s: %w", r.reference(), err)
	}
	if res.Manifest.Digest != r.ref.Digest {
		return nil, fmt.Errorf("chart: pulling %s: the registry answered with manifest %s", r.reference(), res.Manifest.Digest)
	}
	c, err := loader.LoadArchive(bytes.NewReader(res.Chart.Data))
	if err != nil {
		return nil, fmt.Errorf("chart: %s: %w", r.reference(), err)
	}
	return c, nil
}
