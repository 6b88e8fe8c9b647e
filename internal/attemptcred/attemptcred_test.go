package attemptcred_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

var key = []byte("0123456789abcdef0123456789abcdef")

func fill(t *testing.T, manifest any, job attemptcred.Job) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(manifest)
	var m map[string]any
	if err := json.Unmarshal(attemptcred.Fill(raw, key, job, time.Hour, time.Now()), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFillGivesEachAttemptItsOwnCredentials(t *testing.T) {
	scope := registry.Scope{Repository: "org_1/", Actions: []string{"pull"}}
	manifest := map[string]any{"password": attemptcred.State(key, "org_1"),
		"registry": map[string]string{"username": "build/b1", "password": attemptcred.Registry(key, "org_1", "build/b1", scope)}}
	one, two := fill(t, manifest, attemptcred.Job{ID: "job_1", Org: "org_1", Attempt: 1}), fill(t, manifest, attemptcred.Job{ID: "job_1", Org: "org_1", Attempt: 2})
	if one["password"] != store.AttemptStateToken(key, "job_1", 1) || two["password"] != store.AttemptStateToken(key, "job_1", 2) {
		t.Fatalf("state credentials %v, %v", one["password"], two["password"])
	}
	reg1 := one["registry"].(map[string]any)["password"].(string)
	if err := (registry.Tokens{Key: key, Leases: leases{"job_1": 1}}).Authorize(context.Background(), "build/b1", reg1,
		[]registry.Access{{Type: "repository", Name: "org_1/app/db", Action: "pull"}}); err != nil {
		t.Fatalf("attempt 1's registry credential, attempt 1 running: %v", err)
	}
	err := (registry.Tokens{Key: key, Leases: leases{"job_1": 2}}).Authorize(context.Background(), "build/b1", reg1, nil)
	if err == nil || !strings.Contains(err.Error(), "no longer holds its lease") {
		t.Fatalf("attempt 1's registry credential, attempt 2 running: %v", err)
	}
	if err := (registry.Tokens{Key: key}).Authorize(context.Background(), "build/b1", reg1, nil); err == nil {
		t.Fatal("a registry that cannot check leases accepted an attempt's credential")
	}
}

// Text that looks like a placeholder but is not the control plane's own for
// the job's org (an input, a terraform output, another org's placeholder)
// never becomes a credential.
func TestFillIgnoresPlaceholdersItDidNotMake(t *testing.T) {
	forged := func(k []byte) string {
		return attemptcred.Registry(k, "org_1", "x", registry.Scope{Repository: "org_2/", Actions: []string{"pull", "push"}})
	}
	own := attemptcred.Registry(key, "org_1", "install/i1", registry.Scope{Repository: "org_1/app", Actions: []string{"pull"}})
	tampered := own[:len(own)-3] + "abc"
	inputs := map[string]any{
		"signed with another key":      forged([]byte("another key, not the store's one")),
		"another org's":                attemptcred.Registry(key, "org_2", "install/i9", registry.Scope{Repository: "org_2/", Actions: []string{"pull"}}),
		"another org's state":          attemptcred.State(key, "org_2"),
		"tampered":                     tampered,
		"inside a longer string":       "an " + own + " in text",
		"unsigned, the old form":       "outpost-attempt-credential:registry:eyJzdWIiOiJ4In0",
		"unsigned state, the old form": "outpost-attempt-credential:state",
	}
	out := fill(t, inputs, attemptcred.Job{ID: "job_1", Org: "org_1", Attempt: 1})
	for name, v := range inputs {
		if out[name] != v {
			t.Errorf("%s: became %v", name, out[name])
		}
	}
}

// leases says the job's running attempt.
type leases map[string]int

func (l leases) AttemptHoldsLease(_ context.Context, jobID string, attempt int) (bool, error) {
	return l[jobID] == attempt, nil
}
