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

func TestFillGivesEachAttemptItsOwnCredentials(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	scope := registry.Scope{Repository: "org_1/", Actions: []string{"pull"}}
	manifest, _ := json.Marshal(map[string]any{"password": attemptcred.State,
		"registry": map[string]string{"username": "build/b1", "password": attemptcred.Registry("build/b1", scope)},
		"text":     "an " + attemptcred.State + " inside a longer string is left alone"})
	fill := func(attempt int) map[string]any {
		out, err := attemptcred.Fill(manifest, key, "job_1", attempt, time.Hour, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		return m
	}
	one, two := fill(1), fill(2)
	if one["password"] != store.AttemptStateToken(key, "job_1", 1) || two["password"] != store.AttemptStateToken(key, "job_1", 2) {
		t.Fatalf("state credentials %v, %v", one["password"], two["password"])
	}
	reg1 := one["registry"].(map[string]any)["password"].(string)
	if err := (registry.Tokens{Key: key, Leases: leases{"job_1": 1}}).Authorize("build/b1", reg1,
		[]registry.Access{{Type: "repository", Name: "org_1/app/db", Action: "pull"}}); err != nil {
		t.Fatalf("attempt 1's registry credential, attempt 1 running: %v", err)
	}
	err := (registry.Tokens{Key: key, Leases: leases{"job_1": 2}}).Authorize("build/b1", reg1, nil)
	if err == nil || !strings.Contains(err.Error(), "no longer holds its lease") {
		t.Fatalf("attempt 1's registry credential, attempt 2 running: %v", err)
	}
	if err := (registry.Tokens{Key: key}).Authorize("build/b1", reg1, nil); err == nil {
		t.Fatal("a registry that cannot check leases accepted an attempt's credential")
	}
	if one["text"] != "an "+attemptcred.State+" inside a longer string is left alone" {
		t.Fatalf("text changed: %v", one["text"])
	}
	odd := []byte(`{"p":"outpost-attempt-credential:registry:!!"}`) // not a placeholder: left as it is
	if out, err := attemptcred.Fill(odd, key, "job_1", 1, time.Hour, time.Now()); err != nil || string(out) != string(odd) {
		t.Fatalf("%s %v", out, err)
	}
	if _, err := attemptcred.Fill([]byte(`{"p":"outpost-attempt-credential:registry:e30"}`), key, "job_1", 1, time.Hour, time.Now()); err == nil || !strings.Contains(err.Error(), "names no subject") {
		t.Fatalf("a placeholder without a subject: %v", err)
	}
}

// leases says the job's running attempt.
type leases map[string]int

func (l leases) AttemptHoldsLease(_ context.Context, jobID string, attempt int) (bool, error) {
	return l[jobID] == attempt, nil
}
