package activities

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// actionOutputsApp: component web's variable and environment read outputs
// of action migrate, which writes version and (sealed) token.
var actionOutputsApp = storetest.MinimalApp(map[string]string{
	"modules/web/main.tf": "variable \"version\" {}\noutput \"version\" { value = var.version }\n",
	"components/web.toml": `name = "web"
type = "terraform_module"
source = "modules/web"
[variables]
version = "{{ .actions.migrate.outputs.version }}"
[env_vars]
TOKEN = "{{ .actions.migrate.outputs.token }}"
`,
	"actions/migrate.toml": `sensitive_outputs = ["token"]
[[triggers]]
type = "manual"
[[steps]]
name = "migrate"
command = ["/bin/true"]
`,
})

// A component's templates read the install's latest succeeded run of an
// action, from the store: before it has one, rendering fails naming the
// action; after, the sealed output is sensitive (redacted, scrubbed).
func TestRenderReadsActionOutputs(t *testing.T) {
	ctx := context.Background()
	s, tn := storetest.PostgresTenant(t)
	storetest.SyncConfig(t, s, tn, actionOutputsApp)
	r := &renderer{store: s}
	_, cfg, data, err := r.installData(ctx, tn.Install.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.RenderComponent("web", data); err == nil || !strings.Contains(err.Error(), `action "migrate" has never run successfully on this install`) {
		t.Fatalf("before any run: %v", err)
	}

	run, err := s.CreateActionRun(ctx, store.ActionRun{OrgID: tn.Org.ID, InstallID: tn.Install.ID, Action: "migrate",
		Trigger: "manual", WorkflowID: "w"}, []string{"migrate"})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "tok-1f7c"
	if err := s.FinishActionRunStep(ctx, store.ActionRunStep{RunID: run.ID, Status: status.JobSucceeded,
		Outputs: map[string]string{"version": "v42"}, SensitiveOutputs: map[string]string{"token": secret}}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishActionRun(ctx, run.ID, status.JobSucceeded, ""); err != nil {
		t.Fatal(err)
	}
	_, cfg, data, err = r.installData(ctx, tn.Install.ID)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := cfg.RenderComponent("web", data)
	if err != nil {
		t.Fatal(err)
	}
	if string(rendered.Variables["version"]) != `"v42"` || rendered.EnvVars["TOKEN"] != secret {
		t.Errorf("rendered %s, env %v", rendered.Variables["version"], rendered.EnvVars)
	}
	shown, _ := json.Marshal(rendered.Redacted())
	if strings.Contains(string(shown), secret) || !strings.Contains(strings.Join(jobmanifest.Scrub(data, rendered), " "), secret) {
		t.Errorf("the sealed output is shown (%s) or not scrubbed", shown)
	}
}
