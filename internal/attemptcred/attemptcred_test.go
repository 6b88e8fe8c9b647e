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

var key = store.SigningKey{ID: "rk_1", Owner: "org_1", Secret: []byte("0123456789abcdef0123456789abcdef")}

// keys are fixed signing keys (attemptcred.Keys): the first of an owner is
// its current one.
type keys []store.SigningKey

func (ks keys) SigningKey(_ context.Context, owner string) (store.SigningKey, error) {
	for _, k := range ks {
		if k.Owner == owner {
			return k, nil
		}
	}
	return store.SigningKey{}, store.ErrNotFound
}

func (ks keys) SigningKeyByID(_ context.Context, id string) (store.SigningKey, error) {
	for _, k := range ks {
		if k.ID == id || (id == "" && k.ID == store.LegacyKeyID) {
			return k, nil
		}
	}
	return store.SigningKey{}, store.ErrNotFound
}

func fillWith(t *testing.T, ks keys, manifest any, job attemptcred.Job) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(manifest)
	filled, err := attemptcred.Fill(context.Background(), raw, ks, job, time.Hour, time.Now())
	var m map[string]any
	if err != nil || json.Unmarshal(filled, &m) != nil {
		t.Fatalf("fill: %s, %v", filled, err)
	}
	return m
}

func fill(t *testing.T, manifest any, job attemptcred.Job) map[string]any {
	t.Helper()
	return fillWith(t, keys{key}, manifest, job)
}

// tokens is a registry that knows the store's keys.
func tokens(ks keys, l registry.Leases) registry.Tokens {
	return registry.Tokens{Keys: attemptcred.RegistryKeys(ks), Leases: l}
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
	if err := tokens(keys{key}, leases{"job_1": 1}).Authorize(context.Background(), "build/b1", reg1,
		[]registry.Access{{Type: "repository", Name: "org_1/app/db", Action: "pull"}}); err != nil {
		t.Fatalf("attempt 1's registry credential, attempt 1 running: %v", err)
	}
	err := tokens(keys{key}, leases{"job_1": 2}).Authorize(context.Background(), "build/b1", reg1, nil)
	if err == nil || !strings.Contains(err.Error(), "no longer holds its lease") {
		t.Fatalf("attempt 1's registry credential, attempt 2 running: %v", err)
	}
	if err := tokens(keys{key}, nil).Authorize(context.Background(), "build/b1", reg1, nil); err == nil {
		t.Fatal("a registry that cannot check leases accepted an attempt's credential")
	}
}

// Text that looks like a placeholder but is not the control plane's own for
// the job's org (an input, a terraform output, another org's placeholder)
// never becomes a credential.
func TestFillIgnoresPlaceholdersItDidNotMake(t *testing.T) {
	forged := func(k store.SigningKey) string {
		return attemptcred.Registry(k, "org_1", "x", registry.Scope{Repository: "org_2/", Actions: []string{"pull", "push"}})
	}
	own := attemptcred.Registry(key, "org_1", "install/i1", registry.Scope{Repository: "org_1/app", Actions: []string{"pull"}})
	tampered := own[:len(own)-3] + "abc"
	inputs := map[string]any{
		"signed with another key":      forged(store.SigningKey{ID: key.ID, Owner: "org_1", Secret: []byte("another key, not the store's one")}),
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

// A placeholder names the key that signed it: after a rotation, one signed
// with the old key still fills (with a credential of the new key) until the
// old key is retired; another org's key never makes one for this org.
func TestFillChecksTheKeyThePlaceholderNames(t *testing.T) {
	rotated := store.SigningKey{ID: "rk_2", Owner: "org_1", Secret: []byte("the org's new key, 32 bytes long")}
	other := store.SigningKey{ID: "rk_9", Owner: "org_2", Secret: []byte("org 2's key, also 32 bytes long!")}
	job := attemptcred.Job{ID: "job_1", Org: "org_1", Attempt: 1}
	old := attemptcred.State(key, "org_1")
	forged := attemptcred.State(other, "org_1") // org 2's key, claiming org 1
	in := map[string]any{"old": old, "forged": forged}

	out := fillWith(t, keys{rotated, key, other}, in, job)
	if out["old"] != store.AttemptStateToken(rotated, "job_1", 1) {
		t.Errorf("a placeholder of the old key, before it is retired: %v; want a credential of the new key", out["old"])
	}
	if out["forged"] != forged {
		t.Errorf("a placeholder signed with another org's key became %v", out["forged"])
	}
	if out := fillWith(t, keys{rotated, other}, in, job); out["old"] != old {
		t.Errorf("a placeholder of a retired key became %v", out["old"])
	}
}
