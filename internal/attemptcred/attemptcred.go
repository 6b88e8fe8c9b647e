package attemptcred

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/outpost-dev/outpost/registry"
	"github.com/outpost-dev/outpost/store"
)

const prefix = "outpost-attempt-credential:"

// grant is what a placeholder asks for, and for which org's jobs. Kind
// "state" is the state backend's credential; "registry" a vendor-registry
// credential for Subject granting Scopes.
type grant struct {
	Kind    string           `json:"kind"`
	Org     string           `json:"org"`
	Subject string           `json:"sub,omitempty"`
	Scopes  []registry.Scope `json:"scopes,omitempty"`
}

// State stands for the attempt's terraform state credential
// (TerraformBackend.Password) in a job of org.
func State(key []byte, org string) string {
	return encode(key, grant{Kind: "state", Org: org})
}

// Registry stands for a vendor-registry password for subject (the
// RegistryAccess's Username) granting scopes, in a job of org.
func Registry(key []byte, org, subject string, scopes ...registry.Scope) string {
	return encode(key, grant{Kind: "registry", Org: org, Subject: subject, Scopes: scopes})
}

// encode is prefix + base64url(JSON grant) + "." + base64url(HMAC): signed,
// so a placeholder can only come from the control plane, never from text a
// user or a customer's terraform put into a manifest.
func encode(key []byte, g grant) string {
	raw, err := json.Marshal(g)
	if err != nil {
		panic(fmt.Sprintf("encoding a credential grant: %v", err)) // strings only
	}
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return prefix + payload + "." + base64.RawURLEncoding.EncodeToString(mac(key, payload))
}

func mac(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("outpost attempt credential placeholder\x00" + payload))
	return m.Sum(nil)
}

// placeholder matches a placeholder as a whole JSON string.
var placeholder = regexp.MustCompile(`"` + regexp.QuoteMeta(prefix) + `([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)"`)

// Job is the claimed attempt Fill makes credentials for.
type Job struct {
	ID      string
	Org     string
	Attempt int
}

// Fill returns the manifest with every placeholder the control plane made
// for job's org replaced by a credential of its attempt, signed with key
// (the store's RegistryKey). Registry credentials expire after ttl at the
// latest; leases end them sooner. A string that only looks like a
// placeholder (a wrong signature, another org's) is left as it is.
func Fill(manifest []byte, key []byte, job Job, ttl time.Duration, now time.Time) []byte {
	return placeholder.ReplaceAllFunc(manifest, func(m []byte) []byte {
		parts := placeholder.FindSubmatch(m)
		payload, sig := string(parts[1]), parts[2]
		want := base64.RawURLEncoding.EncodeToString(mac(key, payload))
		if !hmac.Equal([]byte(want), sig) {
			return m
		}
		raw, err := base64.RawURLEncoding.DecodeString(payload)
		var g grant
		if err != nil || json.Unmarshal(raw, &g) != nil || g.Org != job.Org || (g.Kind != "state" && g.Kind != "registry") {
			return m
		}
		quoted, _ := json.Marshal(credential(g, key, job, ttl, now)) // a string always encodes
		return quoted
	})
}

func credential(g grant, key []byte, job Job, ttl time.Duration, now time.Time) string {
	if g.Kind == "registry" {
		_, password := registry.IssueAttemptCredential(key, g.Subject, g.Scopes, job.ID, job.Attempt, ttl, now)
		return password
	}
	return store.AttemptStateToken(key, job.ID, job.Attempt)
}
