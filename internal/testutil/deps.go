package testutil

import (
	"os/exec"
	"strings"
	"testing"
)

// ControlPlane are the control plane's packages and what only it links (the
// store's database, Temporal, the API's HTTP framework): neither the runner
// nor the CLI links any of them.
var ControlPlane = []string{
	"github.com/outpost-dev/outpost/store",
	"github.com/outpost-dev/outpost/api",
	"github.com/outpost-dev/outpost/workflows",
	"github.com/outpost-dev/outpost/activities",
	"github.com/outpost-dev/outpost/worker",
	"gorm.io/",
	"go.temporal.io/",
	"github.com/labstack/echo",
}

// CheckDeps fails t when the package in the working directory links a
// package of forbidden (a path, or a prefix ending in "/"), or does not link
// mustLink (so the list is the real one, or the check proves nothing).
func CheckDeps(t *testing.T, binary, mustLink string, forbidden []string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if f = strings.TrimSuffix(f, "/"); dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("%s depends on %s", binary, dep)
			}
		}
	}
	if !strings.Contains(string(out), mustLink+"\n") {
		t.Errorf("go list -deps lacks %s:\n%s", mustLink, out)
	}
}
