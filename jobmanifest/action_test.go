package jobmanifest

import (
	"slices"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/appconfig"
)

// A later step sees earlier steps' outputs as OUTPOST_STEP_<STEP>_<KEY>;
// the sensitive ones are in Scrub, for the runner to mask.
func TestActionStepSeesEarlierOutputs(t *testing.T) {
	cfg, err := appconfig.Load(fstest.MapFS{
		"outpost.toml":    {Data: []byte("[app]\nname = \"a\"\n\n[sandbox]\nsource = \"sandbox\"\n")},
		"sandbox/main.tf": {Data: []byte("")},
		"actions/warm.toml": {Data: []byte("timeout = \"1m\"\n\n[env_vars]\nTARGET = \"blue\"\n\n[[triggers]]\ntype = \"manual\"\n\n" +
			"[[steps]]\nname = \"db_migrate\"\ncommand = [\"true\"]\n\n[[steps]]\nname = \"warm\"\ncommand = [\"true\"]\n\n" +
			"[[steps]]\nname = \"last\"\nscript = \"warm.sh\"\n")},
		"actions/warm.sh": {Data: []byte("echo hi\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	run := ActionRun{Action: "warm", Inputs: map[string]any{}, Earlier: []ActionStepOutputs{
		{Step: "db_migrate", Outputs: map[string]string{"version": "42"}, Sensitive: map[string]string{"admin.pw": "s3"}},
		{Step: "warm", Outputs: map[string]string{"Cache_Hits": "7"}},
	}}
	m, err := ActionStep(cfg, appconfig.Data{}, run, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"TARGET": "blue", "OUTPOST_STEP_DB_MIGRATE_VERSION": "42", "OUTPOST_STEP_DB_MIGRATE_ADMIN_PW": "s3",
		"OUTPOST_STEP_WARM_CACHE_HITS": "7"}
	if len(m.Env) != len(want) {
		t.Fatalf("env %v, want %v", m.Env, want)
	}
	for k, v := range want {
		if m.Env[k] != v {
			t.Errorf("%s = %q, want %q (env %v)", k, m.Env[k], v, m.Env)
		}
	}
	if !slices.Equal(m.Scrub, []string{"s3"}) {
		t.Errorf("scrub %v, want [s3]", m.Scrub)
	}
	if m.Step != "last" || m.Script != "echo hi\n" || m.ScriptName != "actions/warm.sh" || m.TimeoutMS != 60000 {
		t.Errorf("manifest %+v: want step last running actions/warm.sh, 1m", m)
	}
}
