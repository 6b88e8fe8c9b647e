package appconfig

import (
	"testing"
	"testing/fstest"
)

// An action's env_vars may not set the OUTPOST_* variables the runner
// gives each step (an earlier step's output would silently replace it).
func TestActionEnvRunnerOwned(t *testing.T) {
	checkProblems(t, withActions, []problemCase{
		{"a step output's name", func(f fstest.MapFS) {
			replace(f, "actions/migrate.toml", "[env_vars]", "[env_vars]\nOUTPOST_STEP_MIGRATE_VERSION = \"7\"")
		}, "actions/migrate.toml", "env_vars.OUTPOST_STEP_MIGRATE_VERSION", "is set by the runner: OUTPOST_* are its own"},
		{"the job's ID", func(f fstest.MapFS) {
			replace(f, "actions/migrate.toml", "[env_vars]", "[env_vars]\nOUTPOST_JOB_ID = \"j\"")
		}, "actions/migrate.toml", "env_vars.OUTPOST_JOB_ID", "is set by the runner"},
	})
}
