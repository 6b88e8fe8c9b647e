package protocol

import (
	"encoding/json"
	"testing"
	"time"
)

// The API asks a runner's reported policy (as it stored it) before it
// queues an action, and words a refusal as the runner does.
func TestPolicyAllowsActionAsReported(t *testing.T) {
	for _, tc := range []struct {
		name, reported, action, want string
	}{
		{"every action", `{"job_types":["action","terraform"]}`, "migrate", ""},
		{"on the allow-list", `{"job_types":["action"],"actions":["check","migrate"]}`, "migrate", ""},
		{"off the allow-list", `{"job_types":["action"],"actions":["check","warm"]}`, "migrate",
			`the customer's runner does not allow action "migrate" (allowed: check, warm)`},
		{"no action jobs", `{"job_types":["terraform"]}`, "migrate",
			`the customer's runner does not allow action "migrate": it runs no action jobs`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p CustomerPolicy
			if err := json.Unmarshal([]byte(tc.reported), &p); err != nil {
				t.Fatal(err)
			}
			err := p.AllowsAction(tc.action)
			if got := errText(err); got != tc.want {
				t.Errorf("AllowsAction = %q, want %q", got, tc.want)
			}
			if got := p.Refusal(JobTypeAction, tc.action, "", nil, time.Now()); got != tc.want {
				t.Errorf("Refusal = %q, want the same words %q", got, tc.want)
			}
		})
	}
	// An action hook of a deprovision still needs what the deprovision does.
	p := CustomerPolicy{JobTypes: []string{JobTypeAction}, Destroy: DestroyDeny}
	if got := p.Refusal(JobTypeAction, "migrate", ConsentDeprovision, nil, time.Now()); got != "the customer's runner does not allow deprovision" {
		t.Errorf("Refusal of a deprovision's action = %q", got)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
