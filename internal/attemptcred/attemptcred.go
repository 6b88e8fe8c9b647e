package attemptcred

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
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
	KeyID   string           `json:"kid,omitempty"` // the key that signed it (none: the legacy key)
	Subject string           `json:"sub,omitempty"`
	Scopes  []registry.Scope `json:"scopes,omitempty"`
}

// State stands for the attempt's terraform state credential
// (TerraformBackend.Password) in a job of org, signed with org's key.
func State(key store.SigningKey, org string) string {
	return encode(key, grant{Kind: "state", Org: org})
}

// Registry stands for a vendor-registry password for subject (the
// RegistryAccess's Username) granting scopes, in a job of org, signed with
// org's key.
func Registry(key store.SigningKey, org, subject string, scopes ...registry.Scope) string {
	return encode(key, grant{Kind: "registry", Org: org, Subject: subject, Scopes: scopes})
}

// encode is prefix + base64url(JSON grant) + "." + base64url(HMAC): signed,
// so a placeholder can only come from the control plane, never from text a
// user or a customer's terraform put into a manifest.
func encode(key store.SigningKey, g grant) string {
	g.KeyID = key.ID
	raw, err := json.Marshal(g)
	if err != nil {
		panic(fmt.Sprintf("encoding a credential grant: %v", err)) // strings only
	}
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return prefix + payload + "." + base64.RawURLEncoding.EncodeToString(mac(key.Secret, payload))
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

// Keys are the store's signing keys (store.Store).
type Keys interface {
	SigningKey(ctx context.Context, owner string) (store.SigningKey, error)
	SigningKeyByID(ctx context.Context, id string) (store.SigningKey, error)
}

// Fill returns the manifest with every placeholder the control plane made
// for job's org replaced by a credential of its attempt, signed with the
// org's current key. A placeholder is checked against the key it names,
// which must be the org's (or the legacy key) and not retired. Registry
// credentials expire after ttl at the latest; leases end them sooner. A
// string that only looks like a placeholder (a wrong signature, another
// org's, a retired key's) is left as it is. The error is the store's.
func Fill(ctx context.Context, manifest []byte, keys Keys, job Job, ttl time.Duration, now time.Time) ([]byte, error) {
	f := filler{ctx: ctx, keys: keys, job: job, verify: map[string]store.SigningKey{}}
	out := placeholder.ReplaceAllFunc(manifest, func(m []byte) []byte {
		parts := placeholder.FindSubmatch(m)
		g, ok := f.grant(string(parts[1]), parts[2])
		if !ok {
			return m
		}
		if f.sign.ID == "" && f.err == nil {
			f.sign, f.err = keys.SigningKey(ctx, job.Org)
		}
		if f.err != nil {
			return m
		}
		quoted, _ := json.Marshal(credential(g, f.sign, job, ttl, now)) // a string always encodes
		return quoted
	})
	return out, f.err
}

// filler keeps, for one Fill, the keys read and the first store error.
type filler struct {
	ctx    context.Context
	keys   Keys
	job    Job
	verify map[string]store.SigningKey
	sign   store.SigningKey
	err    error
}

// grant returns the placeholder's grant if it is the control plane's own
// for the job's org.
func (f *filler) grant(payload string, sig []byte) (grant, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	var g grant
	if err != nil || json.Unmarshal(raw, &g) != nil || g.Org != f.job.Org || (g.Kind != "state" && g.Kind != "registry") {
		return grant{}, false
	}
	key, ok := f.verify[g.KeyID]
	if !ok {
		if key, err = f.keys.SigningKeyByID(f.ctx, g.KeyID); err != nil {
			if !errors.Is(err, store.ErrNotFound) && f.err == nil {
				f.err = err
			}
			return grant{}, false
		}
		f.verify[g.KeyID] = key
	}
	want := base64.RawURLEncoding.EncodeToString(mac(key.Secret, payload))
	if !hmac.Equal([]byte(want), sig) || (key.Owner != f.job.Org && key.Owner != "") {
		return grant{}, false
	}
	return g, true
}

func credential(g grant, key store.SigningKey, job Job, ttl time.Duration, now time.Time) string {
	if g.Kind == "registry" {
		_, password := registry.IssueAttemptCredential(registry.Key(key), g.Subject, g.Scopes, job.ID, job.Attempt, ttl, now)
		return password
	}
	return store.AttemptStateToken(key, job.ID, job.Attempt)
}

// RegistryKeys are the store's signing keys as the vendor registry looks
// them up (registry.Tokens.Keys).
func RegistryKeys(keys Keys) registry.Keys { return registryKeys{keys} }

type registryKeys struct{ keys Keys }

func (r registryKeys) RegistryKey(ctx context.Context, id string) (registry.Key, error) {
	k, err := r.keys.SigningKeyByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		err = fmt.Errorf("%w: %w", registry.ErrUnknownKey, err)
	}
	return registry.Key(k), err
}
