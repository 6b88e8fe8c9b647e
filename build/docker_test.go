package build_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/outpost-dev/outpost/charts"
)

// images are the images scripts/docker.sh builds: the runner chart's default
// image, and the control plane's beside it.
type images struct{ control, runner, version string }

var (
	buildOnce sync.Once
	built     images
	skipWhy   string
	buildErr  error
)

// buildImages builds both images once per test binary; it skips the test
// when no Docker engine can be started.
func buildImages(t *testing.T) images {
	t.Helper()
	buildOnce.Do(func() { built, skipWhy, buildErr = build() })
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

func build() (images, string, error) {
	if out, err := script("engine"); err != nil {
		return images{}, fmt.Sprintf("no Docker engine could be started (scripts/docker.sh engine: %v):\n%s", err, out), nil
	}
	if out, err := script("bases", "images"); err != nil {
		return images{}, "", fmt.Errorf("scripts/docker.sh bases images: %w\n%s", err, out)
	}
	return defaultImages()
}

// script runs scripts/docker.sh with the default image names.
func script(steps ...string) ([]byte, error) {
	cmd := exec.Command("bash", append([]string{"../scripts/docker.sh"}, steps...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OUTPOST_IMAGE_REPO=") && !strings.HasPrefix(kv, "OUTPOST_VERSION=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd.CombinedOutput()
}

// defaultImages reads the runner chart's default image: its repository and
// its appVersion as the tag.
func defaultImages() (images, string, error) {
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	var values struct {
		Image struct {
			Repository string `json:"repository"`
		} `json:"image"`
	}
	for name, v := range map[string]any{"Chart.yaml": &chart, "values.yaml": &values} {
		b, err := fs.ReadFile(charts.RunnerChart(), name)
		if err != nil {
			return images{}, "", fmt.Errorf("runner chart: %w", err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			return images{}, "", fmt.Errorf("runner chart's %s: %w", name, err)
		}
	}
	repo, tag := values.Image.Repository, chart.AppVersion
	return images{control: strings.TrimSuffix(repo, "-runner") + ":" + tag, runner: repo + ":" + tag, version: tag}, "", nil
}

// docker runs the docker CLI and returns its standard output; it fails the
// test, with both outputs, when docker fails.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("docker %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// imageConfig is what docker image inspect says of an image's configuration.
type imageConfig struct {
	User       string
	Entrypoint []string
	Labels     map[string]string
}

func inspect(t *testing.T, image string) imageConfig {
	t.Helper()
	var c imageConfig
	if err := json.Unmarshal([]byte(docker(t, "image", "inspect", "--format", "{{json .Config}}", image)), &c); err != nil {
		t.Fatalf("inspect %s: %v", image, err)
	}
	return c
}
