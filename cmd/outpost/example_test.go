package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
)

// TestExampleArchiveOverlays: -example examples/demo-app,examples/build-app
// is the demo app with build-app's docker_build image and the chart that
// runs it in the demo's cluster.
func TestExampleArchiveOverlays(t *testing.T) {
	archive, err := exampleArchive("../../examples/demo-app,../../examples/build-app")
	if err != nil {
		t.Fatal(err)
	}
	c, err := appconfig.FromArchive(archive)
	if err != nil {
		t.Fatalf("the demo app with build-app laid over it: %v", err)
	}
	img, _ := c.Component("site_image")
	if img.Type != contract.TypeDockerBuild || img.Docker == nil || img.Docker.Target != "runtime" || img.Docker.BuildArgs["VERSION"] != "1.0.0" {
		t.Errorf("site_image: %s %+v; want a docker_build of target runtime with VERSION", img.Type, img.Docker)
	}
	site, _ := c.Component("site")
	if site.Type != contract.TypeHelmChart || !reflect.DeepEqual(site.Dependencies, []string{"cluster", "site_image"}) {
		t.Errorf("site: %s, dependencies %v; want a chart after cluster and site_image", site.Type, site.Dependencies)
	}
	if _, ok := c.Component("web"); !ok {
		t.Error("the demo's components are gone")
	}
}

// TestExampleArchiveErrors: a first directory with no app config, and an
// overlay that is not a directory, are refused, naming the directory.
func TestExampleArchiveErrors(t *testing.T) {
	empty := t.TempDir()
	if _, err := exampleArchive(empty); err == nil || !strings.Contains(err.Error(), "no app config at "+empty) {
		t.Errorf("an empty directory: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := exampleArchive("../../examples/demo-app," + missing); err == nil || !strings.Contains(err.Error(), "example "+missing) {
		t.Errorf("a missing overlay: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("the missing overlay was created")
	}
}
