package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
)

// forgottenOp is what a deprovision with forget answers.
type forgottenOp struct {
	ID         string    `json:"id"`
	WorkflowID string    `json:"workflow_id"`
	Status     status.Op `json:"status"`
	Forget     bool      `json:"forget"`
	Steps      []struct {
		Name       string      `json:"name"`
		Status     status.Step `json:"status"`
		Error      string      `json:"error"`
		LeftBehind []string    `json:"left_behind"`
	} `json:"steps"`
}

// An install whose component cannot be destroyed any more (the account its
// destroy needs is gone): a plain deprovision fails and the install keeps
// the component; `outpostctl deprovision --forget` succeeds, names the
// component and the resources it left behind (in its answer, `operations
// show` and `installs show`), the install ends deprovisioned without the component
// or its state, the audit log records the forget, and the install takes
// the next operation.
func TestDeprovisionForgetNamesWhatItLeftBehind(t *testing.T) {
	s := newStack(t, stackOptions{})
	account := s.syncAppWithFile("testdata/stuck-app", "stuck", "ACCOUNT_FILE")
	if err := os.WriteFile(account, []byte("acme"), 0o600); err != nil {
		t.Fatal(err)
	}
	inst, _ := s.newInstall("cust-gone")
	s.provisioned(inst, 5*time.Minute)
	if err := os.Remove(account); err != nil { // the account changed under the install
		t.Fatal(err)
	}

	plain := s.waitOp(inst, s.startOp(inst, "/deprovision", nil).ID, 5*time.Minute)
	if plain.Status != status.OpFailed || plain.step(t, "stuck").Status != status.StepFailed ||
		plain.step(t, status.SandboxStep).Status != status.StepSkipped || !strings.Contains(plain.Error, "is gone") {
		t.Fatalf("plain deprovision: %s %q %+v; want stuck failed (the account is gone), the sandbox skipped", plain.Status, plain.Error, plain.Steps)
	}
	if _, ok := s.installComponents(inst)["stuck"]; !ok {
		t.Fatalf("after the failed deprovision the install no longer runs stuck: %+v", s.installComponentList(inst))
	}

	c := newCLI(t, s)
	var forgot forgottenOp
	c.json("", &forgot, "deprovision", "cust-gone", "--forget", "--wait")
	var stuck, sandbox int
	for i, st := range forgot.Steps {
		switch st.Name {
		case "stuck":
			stuck = i
		case status.SandboxStep:
			sandbox = i
		}
	}
	left := forgot.Steps[stuck]
	if forgot.Status != status.OpSucceeded || !forgot.Forget || left.Status != status.StepLeftBehind ||
		!slices.Equal(left.LeftBehind, []string{"terraform_data.stuck"}) || !strings.Contains(left.Error, "is gone") ||
		forgot.Steps[sandbox].Status != status.StepSucceeded {
		t.Fatalf("deprovision --forget: %+v; want it succeeded, stuck left behind naming terraform_data.stuck, the sandbox destroyed", forgot)
	}
	s.replay(forgot.WorkflowID)
	shown := c.ok("", "operations", "show", "cust-gone", forgot.ID)
	if want := "stuck could not be destroyed ("; !strings.Contains(shown, want) || !strings.Contains(shown, "left behind: terraform_data.stuck") {
		t.Fatalf("operations show lacks what was left behind:\n%s", shown)
	}

	if shown := c.ok("", "installs", "show", "cust-gone"); !strings.Contains(shown, ": deprovisioned\n") ||
		!strings.Contains(shown, "forgotten by deprovision "+forgot.ID+"; left behind in its account:\n  stuck (") ||
		!strings.Contains(shown, "): terraform_data.stuck\n") {
		t.Fatalf("installs show does not name what the forgotten install left behind:\n%s", shown)
	}
	var got struct{ Status status.Install }
	if s.do("GET", "/v1/installs/"+inst, nil, &got); got.Status != status.InstallDeprovisioned {
		t.Fatalf("install %s after deprovision --forget, want deprovisioned", got.Status)
	}
	if comps := s.installComponentList(inst); len(comps) != 0 {
		t.Fatalf("the install still runs %+v after deprovision --forget", comps)
	}
	s.checkForgetAudited(forgot.ID)
	s.checkTakesNextOperation(inst)
}

// checkForgetAudited checks the audit log records the deprovision with
// forget that made operation opID.
func (s *stack) checkForgetAudited(opID string) {
	s.t.Helper()
	var events struct {
		Events []struct {
			Objects map[string]string `json:"objects"`
		} `json:"events"`
	}
	s.get("/v1/audit?action=deprovisionInstall", &events)
	for _, e := range events.Events {
		if e.Objects["operation_id"] == opID && e.Objects["forget"] == "true" {
			return
		}
	}
	s.t.Fatalf("no audit event of the deprovision with forget %s: %+v", opID, events.Events)
}
