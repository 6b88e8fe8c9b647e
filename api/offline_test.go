package api

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// The install file holds the non-sensitive inputs with their values and the
// sensitive ones by name; the sensitive value is nowhere in the answer. The
// export is in the audit log, naming who made it.
func TestExportOfflineInstall(t *testing.T) {
	e := newTestEnv(t)
	appID := e.exampleApp()
	const secret = "offline-pw-8c2a"
	var inst installAnswer
	e.call("POST", "/v1/installs", map[string]any{"app_id": appID, "name": "acme", "labels": map[string]string{"tier": "gold"},
		"inputs": []map[string]any{{"name": "db_password", "value": secret}, {"name": "region", "value": "eu-west-3"}}}, 201, &inst)
	var f protocol.OfflineInstall
	res := e.call("GET", "/v1/installs/"+inst.ID+"/offline-install", nil, 200, &f)
	if bytes.Contains(res.body, []byte(secret)) {
		t.Fatalf("the install file holds the sensitive value: %s", res.body)
	}
	if err := f.Check(); err != nil {
		t.Fatalf("the install file does not check: %v: %s", err, res.body)
	}
	if f.InstallID != inst.ID || f.AppID != appID || f.AppName != "demo" || f.InstallName != "acme" || f.OrgID != e.org.ID ||
		f.Labels["tier"] != "gold" || f.Inputs["region"] != "eu-west-3" || len(f.Inputs) != 1 ||
		!reflect.DeepEqual(f.SensitiveInputs, []string{"db_password"}) {
		t.Fatalf("install file %s", res.body)
	}
	var audit wire.AuditEventList
	e.call("GET", "/v1/audit?action=exportOfflineInstall", nil, 200, &audit)
	if len(audit.Events) != 1 || audit.Events[0].Objects["install_id"] != inst.ID || audit.Events[0].UserName == "" {
		t.Fatalf("audit of the export: %+v", audit.Events)
	}
}

// offlineResultFor is a result of a succeeded offline deploy of inst at
// config version 1: a sync, the sandbox and a component with outputs, a log
// and a policy.
func offlineResultFor(inst installAnswer, appID string) protocol.OfflineResult {
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 123456789, time.UTC)
	return protocol.OfflineResult{Format: protocol.OfflineResultFormat, InstallID: inst.ID, AppID: appID, ConfigVersion: 1,
		BundleIndex: "sha256:" + strings.Repeat("ab", 32), Status: "succeeded", StartedAt: t0, FinishedAt: t0.Add(time.Minute),
		RunnerVersion: "test", Steps: []protocol.OfflineStep{
			{Name: "sync", Kind: protocol.OfflineStepSync, Status: "succeeded", StartedAt: t0, FinishedAt: t0.Add(time.Second),
				Log: "loaded 3 blobs\n"},
			{Name: "sandbox", Kind: protocol.OfflineStepSandbox, Status: "succeeded", StartedAt: t0, FinishedAt: t0.Add(2 * time.Second),
				Outputs: map[string]any{"vpc_id": "vpc-0ff1"}},
			{Name: "db", Kind: protocol.OfflineStepComponent, Component: "db", Status: "succeeded", StartedAt: t0,
				FinishedAt: t0.Add(time.Minute), Outputs: map[string]any{"endpoint": "db.internal:5432"},
				Policy: &protocol.PolicyResult{Source: protocol.PolicyCustomer, Policy: "outpost.tags", Warn: []string{"no owner tag"}},
				Log:    "Apply complete! Resources: 2 added, 0 changed, 0 destroyed.\n"},
		}}
}

// An imported result is an operation of the install, offline, with its
// steps, logs, policies and outputs, and the install at its version; the
// same result again answers the same operation.
func TestImportOfflineResult(t *testing.T) {
	e, appID, inst := offlineInstall(t)
	r := offlineResultFor(inst, appID)
	var op wire.Operation
	e.call("POST", "/v1/installs/"+inst.ID+"/offline-results", r, 201, &op)
	if op.Kind != "offline_deploy" || op.Source != "offline" || op.Status != "succeeded" || op.ConfigVersion != 1 ||
		op.BundleIndex != r.BundleIndex || len(op.Steps) != 3 || op.StartedBy == "" {
		t.Fatalf("imported operation %+v", op)
	}
	var got wire.Operation
	e.call("GET", "/v1/installs/"+inst.ID+"/operations/"+op.ID, nil, 200, &got)
	var db wire.Step
	for _, st := range got.Steps {
		if st.Name == "db" {
			db = st
		}
	}
	if db.Status != "succeeded" || db.ApplyJobID == nil || len(db.Policies) != 1 || db.Policies[0].Warn[0] != "no owner tag" ||
		db.StartedAt == nil || !db.FinishedAt.Equal(r.Steps[2].FinishedAt.Truncate(time.Microsecond)) {
		t.Fatalf("step db %+v", db)
	}
	var logs wire.LogPage
	e.call("GET", "/v1/jobs/"+*db.ApplyJobID+"/logs", nil, 200, &logs)
	if len(logs.Chunks) != 1 || logs.Chunks[0].Data != r.Steps[2].Log {
		t.Fatalf("logs of step db: %+v", logs)
	}
	var outs wire.Outputs
	e.call("GET", "/v1/installs/"+inst.ID+"/outputs", nil, 200, &outs)
	if outs.Outputs["db"]["endpoint"].Value != "db.internal:5432" || outs.Outputs["sandbox"]["vpc_id"].Value != "vpc-0ff1" {
		t.Fatalf("outputs %+v", outs.Outputs)
	}
	var after struct {
		Status        string `json:"status"`
		ConfigVersion int    `json:"config_version"`
	}
	e.call("GET", "/v1/installs/"+inst.ID, nil, 200, &after)
	if after.Status != "active" || after.ConfigVersion != 1 {
		t.Fatalf("install after the import: %+v", after)
	}
	var again wire.Operation
	e.call("POST", "/v1/installs/"+inst.ID+"/offline-results", r, 200, &again)
	var list wire.OperationList
	e.call("GET", "/v1/installs/"+inst.ID+"/operations", nil, 200, &list)
	if again.ID != op.ID || len(list.Operations) != 1 {
		t.Fatalf("the same result again: %s, operations %d", again.ID, len(list.Operations))
	}
	var audit wire.AuditEventList
	e.call("GET", "/v1/audit?action=importOfflineResult", nil, 200, &audit)
	if len(audit.Events) != 2 || audit.Events[1].Objects["operation_id"] != op.ID || audit.Events[1].UserName == "" {
		t.Fatalf("audit of the imports: %+v", audit.Events)
	}
}

// A bad result is a 4xx naming the field, and changes nothing; so is one
// A hook step (an action's lifecycle hook the offline deploy ran) imports
// as a step of the operation; its outputs are its action's, not the
// install's.
func TestImportOfflineResultWithAHookStep(t *testing.T) {
	e, appID, inst := offlineInstall(t)
	r := offlineResultFor(inst, appID)
	t0 := r.Steps[2].StartedAt
	r.Steps = append(r.Steps[:2], protocol.OfflineStep{Name: "before:migrate:db", Kind: protocol.OfflineStepHook, Status: "succeeded",
		StartedAt: t0, FinishedAt: t0.Add(time.Second), Outputs: map[string]any{"schema_version": "7"}, Log: "migrated to 7\n"}, r.Steps[2])
	var op wire.Operation
	e.call("POST", "/v1/installs/"+inst.ID+"/offline-results", r, 201, &op)
	i := slices.IndexFunc(op.Steps, func(st wire.Step) bool { return st.Name == "before:migrate:db" })
	if op.Status != "succeeded" || len(op.Steps) != 4 || i < 0 || op.Steps[i].Status != "succeeded" || op.Steps[i].ApplyJobID == nil {
		t.Fatalf("imported operation %+v", op)
	}
	var outs wire.Outputs
	e.call("GET", "/v1/installs/"+inst.ID+"/outputs", nil, 200, &outs)
	if len(outs.Outputs) != 2 || outs.Outputs["db"]["schema_version"].Value != nil {
		t.Fatalf("outputs %+v: want the sandbox's and db's only", outs.Outputs)
	}
}

// imported while another operation holds the install.
func TestImportOfflineResultRefused(t *testing.T) {
	e, appID, inst := offlineInstall(t)
	before := e.snapshot()
	for field, change := range map[string]func(r *protocol.OfflineResult){
		"format":             func(r *protocol.OfflineResult) { r.Format = "outpost.offline-result/v0" },
		"install_id":         func(r *protocol.OfflineResult) { r.InstallID = "ins_other" },
		"app_id":             func(r *protocol.OfflineResult) { r.AppID = "app_other" },
		"config_version":     func(r *protocol.OfflineResult) { r.ConfigVersion = 9 },
		"bundle_index":       func(r *protocol.OfflineResult) { r.BundleIndex = "sha256:not-hex" },
		"finished_at":        func(r *protocol.OfflineResult) { r.FinishedAt = time.Time{} },
		"status":             func(r *protocol.OfflineResult) { r.Status = "done" },
		"steps[1].status":    func(r *protocol.OfflineResult) { r.Steps[1].Status = "ok" },
		"steps[2].name":      func(r *protocol.OfflineResult) { r.Steps[2].Name = "sandbox" },
		"steps[0].kind":      func(r *protocol.OfflineResult) { r.Steps[0].Kind = "apply" },
		"steps[2].component": func(r *protocol.OfflineResult) { r.Steps[2].Component = "" },
	} {
		r := offlineResultFor(inst, appID)
		change(&r)
		res := e.call("POST", "/v1/installs/"+inst.ID+"/offline-results", r, 422, nil)
		if got := res.apiError(t).Field; got != field {
			t.Errorf("%s: the refusal names %q: %s", field, got, res.body)
		}
	}
	op, err := e.store.StartOperation(context.Background(), store.InstallOperation{OrgID: e.org.ID, InstallID: inst.ID,
		Kind: store.OpProvision, WorkflowID: "wf/busy"})
	if err != nil {
		t.Fatal(err)
	}
	res := e.call("POST", "/v1/installs/"+inst.ID+"/offline-results", offlineResultFor(inst, appID), 409, nil)
	if !strings.Contains(res.apiError(t).Message, op.ID) {
		t.Errorf("refused while busy without naming the operation: %s", res.body)
	}
	after := e.snapshot()
	delete(before, "install_operations")
	delete(after, "install_operations")
	delete(before, "install_locks")
	delete(after, "install_locks")
	if d := snapshotDiff(before, after); d != "" {
		t.Errorf("refused imports changed stored rows:\n%s", d)
	}
	var list wire.OperationList
	e.call("GET", "/v1/installs/"+inst.ID+"/operations", nil, 200, &list)
	if len(list.Operations) != 1 || list.Operations[0].ID != op.ID {
		t.Errorf("operations after refused imports: %+v", list.Operations)
	}
}

// offlineInstall is a test env with the example app, its builds, and an
// install of it (acme) whose offline result the tests import.
func offlineInstall(t *testing.T) (*testEnv, string, installAnswer) {
	t.Helper()
	e := newTestEnv(t)
	appID := e.exampleApp()
	var inst installAnswer
	e.call("POST", "/v1/installs", map[string]any{"app_id": appID, "name": "acme",
		"inputs": []map[string]any{{"name": "db_password", "value": "pw"}, {"name": "region", "value": "eu-west-3"}}}, 201, &inst)
	return e, appID, inst
}

// An import keeps the component's sensitive outputs stored before (a result
// carries none) and seals what it writes; a result that started before one
// already imported is recorded but leaves the install's outputs alone.
func TestOfflineImportKeepsTheLatestAndSensitiveOutputs(t *testing.T) {
	e, appID, inst := offlineInstall(t)
	ctx := context.Background()
	if err := e.store.SaveOutputs(ctx, inst.ID, "db", `{"outputs":{"password":{"value":"\"pw-kept\"","sensitive":true}}}`); err != nil {
		t.Fatal(err)
	}
	e.call("POST", "/v1/installs/"+inst.ID+"/offline-results", offlineResultFor(inst, appID), 201, nil)
	older := offlineResultFor(inst, appID)
	older.StartedAt, older.BundleIndex = older.StartedAt.Add(-time.Hour), "sha256:"+strings.Repeat("cd", 32)
	older.Steps[2].Outputs = map[string]any{"endpoint": "old.internal:5432"}
	e.call("POST", "/v1/installs/"+inst.ID+"/offline-results", older, 201, nil)

	outs, err := e.store.ListOutputs(ctx, inst.ID)
	if err != nil {
		t.Fatal(err)
	}
	var db protocol.TerraformApplyOutputs
	if err := json.Unmarshal([]byte(outs["db"]), &db); err != nil {
		t.Fatal(err)
	}
	if string(db.Outputs["endpoint"].Value) != `"db.internal:5432"` || !db.Outputs["password"].Sensitive {
		t.Errorf("db's outputs after both imports: %s", outs["db"])
	}
	var raw string
	if err := e.store.DB().Raw("SELECT outputs FROM install_outputs WHERE install_id = ? AND name = 'db'", inst.ID).Scan(&raw).Error; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "db.internal") || strings.Contains(raw, "pw-kept") {
		t.Errorf("db's outputs are stored in clear: %s", raw)
	}
}

// The same result imported several times at once is recorded once: one
// answer 201, the others 200 with the same operation (none an error).
func TestSameResultImportedAtOnce(t *testing.T) {
	e, appID, inst := offlineInstall(t)
	r := offlineResultFor(inst, appID)
	answers := make([]response, 16)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = e.send("POST", "/v1/installs/"+inst.ID+"/offline-results", e.token, r) })
	}
	wg.Wait()
	created, ids := 0, map[string]bool{}
	for _, a := range answers {
		var op wire.Operation
		if (a.status != 200 && a.status != 201) || json.Unmarshal(a.body, &op) != nil {
			t.Fatalf("an import at once answered %s", a)
		}
		if a.status == 201 {
			created++
		}
		ids[op.ID] = true
	}
	var list wire.OperationList
	e.call("GET", "/v1/installs/"+inst.ID+"/operations", nil, 200, &list)
	if created != 1 || len(ids) != 1 || len(list.Operations) != 1 {
		t.Fatalf("16 imports at once: %d created, operations answered %v, listed %d", created, ids, len(list.Operations))
	}
}
