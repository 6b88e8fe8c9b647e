package activities

import (
	"slices"
	"testing"

	"github.com/outpost-dev/outpost/store"
)

// A later step sees earlier steps' outputs as OUTPOST_STEP_<STEP>_<KEY>;
// the sensitive ones are returned for the runner to mask.
func TestStepOutputsEnv(t *testing.T) {
	env := map[string]string{"TARGET": "blue"}
	secret := stepOutputsEnv([]store.ActionRunStep{
		{Name: "db-migrate", Outputs: map[string]string{"version": "42"}, SensitiveOutputs: map[string]string{"admin.pw": "s3"}},
		{Name: "warm", Outputs: map[string]string{"Cache_Hits": "7"}},
	}, env)
	want := map[string]string{"TARGET": "blue", "OUTPOST_STEP_DB_MIGRATE_VERSION": "42", "OUTPOST_STEP_DB_MIGRATE_ADMIN_PW": "s3",
		"OUTPOST_STEP_WARM_CACHE_HITS": "7"}
	if len(env) != len(want) {
		t.Fatalf("env %v, want %v", env, want)
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q (env %v)", k, env[k], v, env)
		}
	}
	if !slices.Equal(secret, []string{"s3"}) {
		t.Errorf("sensitive values %v, want [s3]", secret)
	}
}
