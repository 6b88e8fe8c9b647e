package workflows_test

import (
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil"
)

// TestWorkflowsLinkNoImplementation keeps the workflows to the contract:
// they reach activities by name, so they link neither the activities nor
// the store, the app config or the API, and none of their dependencies.
func TestWorkflowsLinkNoImplementation(t *testing.T) {
	testutil.CheckDeps(t, "workflows", "github.com/outpost-dev/outpost/contract", []string{
		"github.com/outpost-dev/outpost/activities",
		"github.com/outpost-dev/outpost/store",
		"github.com/outpost-dev/outpost/appconfig",
		"github.com/outpost-dev/outpost/worker",
		"github.com/outpost-dev/outpost/api",
		"gorm.io/",
		"github.com/jackc/pgx",
		"github.com/mattn/go-sqlite3",
		"github.com/hashicorp/hcl",
		"github.com/BurntSushi/toml",
		"github.com/pelletier/go-toml",
		"github.com/labstack/echo",
		"helm.sh/",
	})
}
