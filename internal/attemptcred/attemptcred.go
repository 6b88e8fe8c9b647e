package attemptcred

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

const prefix = "outpost-attempt-credential:"

// State stands for the attempt's terraform state credential
// (TerraformBackend.Password).
const State = prefix + "state"

// grant is what a Registry placeholder asks for.
type grant struct {
	Subject string           `json:"sub"`
	Scopes  []registry.Scope `json:"scopes"`
}

// Registry stands for a vendor-registry password for subject (the
// RegistryAccess's Username) granting scopes, bound to the attempt.
func Registry(subject string, scopes ...registry.Scope) string {
	raw, err := json.Marshal(grant{Subject: subject, Scopes: scopes})
	if err != nil {
		panic(fmt.Sprintf("encoding a registry grant: %v", err)) // strings only
	}
	return prefix + "registry:" + base64.RawURLEncoding.EncodeToString(raw)
}

// placeholder matches a placeholder as a whole JSON string.
var placeholder = regexp.MustCompile(`"` + regexp.QuoteMeta(prefix) + `(state|registry:[A-Za-z0-9_-]*)"`)

// Fill returns the manifest with every placeholder replaced by a credential
// of attempt of job, signed with key (the store's RegistryKey). Registry
// credentials expire after ttl at the latest; leases end them sooner.
func Fill(manifest []byte, key []byte, jobID string, attempt int, ttl time.Duration, now time.Time) ([]byte, error) {
	var bad error
	out := placeholder.ReplaceAllFunc(manifest, func(m []byte) []byte {
		cred, err := credential(string(m[len(prefix)+1:len(m)-1]), key, jobID, attempt, ttl, now)
		if err != nil {
			bad = err
			return m
		}
		quoted, _ := json.Marshal(cred) // a string always encodes
		return quoted
	})
	if bad != nil {
		return nil, fmt.Errorf("job %s: %w", jobID, bad)
	}
	return out, nil
}

func credential(kind string, key []byte, jobID string, attempt int, ttl time.Duration, now time.Time) (string, error) {
	if kind == "state" {
		return store.AttemptStateToken(key, jobID, attempt), nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(kind[len("registry:"):])
	var g grant
	if err == nil {
		err = json.Unmarshal(raw, &g)
	}
	switch {
	case err != nil:
		return "", fmt.Errorf("a registry credential placeholder in the manifest does not decode: %w", err)
	case g.Subject == "":
		return "", fmt.Errorf("a registry credential placeholder in the manifest names no subject")
	}
	_, password := registry.IssueAttemptCredential(key, g.Subject, g.Scopes, jobID, attempt, ttl, now)
	return password, nil
}
