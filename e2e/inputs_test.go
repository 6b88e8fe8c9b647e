package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// inputsAnswer is the answer to PATCH /v1/installs/:id/inputs.
type inputsAnswer struct {
	InputsVersion int `json:"inputs_version"`
	Version       *struct {
		Version int      `json:"version"`
		Set     []string `json:"set"`
		Removed []string `json:"removed"`
	} `json:"version"`
	Operation *operation `json:"operation"`
}

// patchInputs sends a change of the install's inputs; it returns the status,
// the answer as sent, and decoded.
func (s *stack) patchInputs(inst string, body map[string]any) (int, string, inputsAnswer) {
	s.t.Helper()
	var raw json.RawMessage
	code := s.do("PATCH", "/v1/installs/"+inst+"/inputs", body, &raw)
	var ans inputsAnswer
	if code == http.StatusOK {
		if err := json.Unmarshal(raw, &ans); err != nil {
			s.t.Fatal(err)
		}
	}
	return code, string(raw), ans
}

// installVersions is the install's inputs and config versions as the API
// shows them.
type installVersions struct {
	InputsVersion int `json:"inputs_version"`
	ConfigVersion int `json:"config_version"`
}

func (s *stack) installVersions(inst string) installVersions {
	s.t.Helper()
	var got installVersions
	s.do("GET", "/v1/installs/"+inst, nil, &got)
	return got
}

// Changing the demo install's inputs re-applies only what renders
// differently: a new database password re-applies database and, through
// its url output, api; everything else is reported unchanged. A sensitive
// value never shows; a bad change is a 422 naming the input and changes
// nothing. Under prompt approval each changed step waits for its approval.
func TestUpdateInputsExampleApp(t *testing.T) {
	s := newStack(t, stackOptions{})
	inst := s.newDemoInstall("cust-u", "first-pa55word")
	s.provisioned(inst, 5*time.Minute)

	// Rejected changes: 422 naming the input, nothing changed.
	for _, bad := range []struct {
		body        map[string]any
		field, name string
	}{
		{map[string]any{"set": []map[string]any{{"name": "api_replicas", "value": "many"}}}, "set[0].value", "api_replicas"},
		{map[string]any{"set": []map[string]any{{"name": "colour", "value": "blue"}}}, "set[0].name", "colour"},
		{map[string]any{"remove": []string{"db_password"}}, "remove[0]", "db_password"},
		{map[string]any{"set": []map[string]any{{"name": "db_password", "value": "not-shown", "sensitive": true},
			{"name": "cache_enabled", "value": "maybe"}}}, "set[1].value", "cache_enabled"},
	} {
		code, raw, _ := s.patchInputs(inst, bad.body)
		var e struct{ Field, Message string }
		json.Unmarshal([]byte(raw), &e)
		if code != http.StatusUnprocessableEntity || e.Field != bad.field || !strings.Contains(e.Message, `"`+bad.name+`"`) {
			t.Fatalf("PATCH %v = %d %s, want 422 on %s naming %s", bad.body, code, raw, bad.field, bad.name)
		}
	}
	if v := s.installVersions(inst).InputsVersion; v != 1 {
		t.Fatalf("inputs version %d after rejected changes, want 1", v)
	}

	// A new database password, applied at once.
	const secret = "n3w-s3cret-pa55word-q7"
	code, raw, ans := s.patchInputs(inst, map[string]any{"set": []map[string]any{{"name": "db_password", "value": secret}}, "apply": true})
	if code != http.StatusOK || ans.InputsVersion != 2 || ans.Version == nil || !slices.Equal(ans.Version.Set, []string{"db_password"}) || ans.Operation == nil {
		t.Fatalf("PATCH db_password = %d %s", code, raw)
	}
	if strings.Contains(raw, secret) {
		t.Fatalf("the PATCH answer shows the secret: %s", raw)
	}
	if ans.Operation.WorkflowID != "install/"+inst+"/update_inputs" || ans.Operation.Kind != "update_inputs" {
		t.Fatalf("operation %+v", ans.Operation)
	}
	// While it runs, the inputs cannot change, nor another operation start.
	if code, raw, _ := s.patchInputs(inst, map[string]any{"set": []map[string]any{{"name": "region", "value": "us-east-1"}}}); code != http.StatusConflict {
		t.Fatalf("PATCH during the update = %d %s, want 409", code, raw)
	}
	if code := s.do("POST", "/v1/installs/"+inst+"/update-inputs", nil, nil); code != http.StatusConflict {
		t.Fatalf("a second update_inputs = %d, want 409", code)
	}
	op := s.waitOp(inst, ans.Operation.ID, 5*time.Minute)
	checkChangedSteps(t, op, status.StepSucceeded, []string{"database", "api"},
		[]string{"sandbox", "network", "cache", "cluster", "web"})
	s.assertSecretHidden(inst, op, secret)
	var versions json.RawMessage
	s.do("GET", "/v1/installs/"+inst+"/inputs/versions", nil, &versions)
	if strings.Contains(string(versions), secret) || !strings.Contains(string(versions), `"set":["db_password"]`) {
		t.Fatalf("versions %s", versions)
	}
	s.replay(op.WorkflowID)

	// Under prompt approval: change cache_enabled, then apply it by its own
	// route; cache, and api (which reads cache's endpoint), wait for approval.
	if code := s.do("PUT", "/v1/installs/"+inst+"/approval-mode", map[string]string{"approval_mode": "prompt"}, nil); code != http.StatusOK {
		t.Fatalf("set approval mode: %d", code)
	}
	if code, raw, ans := s.patchInputs(inst, map[string]any{"set": []map[string]any{{"name": "cache_enabled", "value": "false"}}}); code != http.StatusOK || ans.InputsVersion != 3 || ans.Operation != nil {
		t.Fatalf("PATCH cache_enabled = %d %s", code, raw)
	}
	prompted := s.startOp(inst, "/update-inputs", nil)
	approved := s.approveEach(inst, prompted.ID)
	op = s.waitOp(inst, prompted.ID, 5*time.Minute)
	checkChangedSteps(t, op, status.StepSucceeded, []string{"cache", "api"},
		[]string{"sandbox", "network", "database", "cluster", "web"})
	if !slices.Equal(approved, []string{"cache", "api"}) {
		t.Fatalf("approved %v, want cache then api", approved)
	}
	s.replay(op.WorkflowID)

	// A change that changes nothing is no new version; removing an optional
	// input (back to its default) is one.
	same := map[string]any{"set": []map[string]any{{"name": "cache_enabled", "value": "false"}}}
	if code, raw, ans := s.patchInputs(inst, same); code != http.StatusOK || ans.InputsVersion != 3 || ans.Version != nil {
		t.Fatalf("PATCH of the same value = %d %s, want version 3 and no new one", code, raw)
	}
	code, raw, ans = s.patchInputs(inst, map[string]any{"remove": []string{"region"}})
	if code != http.StatusOK || ans.InputsVersion != 4 || ans.Version == nil || !slices.Equal(ans.Version.Removed, []string{"region"}) {
		t.Fatalf("PATCH remove region = %d %s", code, raw)
	}
}

// checkChangedSteps checks an update_inputs or deploy_config that ended
// well: the changed steps ended with want and ran a job, the unchanged ones
// none.
func checkChangedSteps(t *testing.T, op operation, want status.Step, changed, unchanged []string) {
	t.Helper()
	if op.Status != status.OpSucceeded {
		t.Fatalf("%s: %s %q %+v", op.Kind, op.Status, op.Error, op.Steps)
	}
	for _, name := range changed {
		if st := op.step(t, name); st.Status != want || st.ApplyJobID == "" {
			t.Fatalf("changed step %s = %+v, want %s with an apply job", name, st, want)
		}
	}
	for _, name := range unchanged {
		if st := op.step(t, name); st.Status != status.StepUnchanged || st.PlanJobID != "" || st.ApplyJobID != "" {
			t.Fatalf("step %s = %+v, want unchanged without a job", name, st)
		}
	}
}

// approveEach approves each step of the operation that waits for approval,
// once it shows its plan, until the operation ends; it returns them in order.
func (s *stack) approveEach(inst, opID string) []string {
	s.t.Helper()
	var approved []string
	waitFor(s.t, 5*time.Minute, "operation "+opID+" to end", func() bool {
		cur := s.getOp(inst, opID, 0)
		for _, st := range cur.Steps {
			if st.Status != status.StepWaitingApproval || slices.Contains(approved, st.Name) {
				continue
			}
			if !strings.Contains(st.Plan, "terraform_data") || st.ApplyJobID != "" {
				s.t.Fatalf("step %s waits for approval without its plan, or applied: %+v", st.Name, st)
			}
			path := fmt.Sprintf("/v1/installs/%s/operations/%s/steps/%s/approve", inst, opID, st.Name)
			if code := s.do("POST", path, nil, nil); code != http.StatusAccepted {
				s.t.Fatalf("approve %s: %d", st.Name, code)
			}
			approved = append(approved, st.Name)
		}
		return cur.FinishedAt != nil
	})
	return approved
}
