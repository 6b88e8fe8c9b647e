package registry

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scope grants actions on repositories.
type Scope struct {
	// Repository is an exact repository name ("org_1/app_2/db"), or a prefix ending in "/" ("org_1/")
	// that covers every repository below it (but not "org_1x/…").
	Repository string `json:"repository"`
	// Actions are "pull" and/or "push" ("delete" for deleting manifests).
	Actions []string `json:"actions"`
}

// covers reports whether the scope allows action on repository.
func (s Scope) covers(repository, action string) bool {
	if !slices.Contains(s.Actions, action) {
		return false
	}
	if strings.HasSuffix(s.Repository, "/") {
		return len(s.Repository) > 1 && strings.HasPrefix(repository, s.Repository)
	}
	return s.Repository != "" && repository == s.Repository
}

// Tokens accepts short-lived credentials made by IssueCredential: each
// names its subject (the username), the repositories and actions it grants,
// when it expires, and the ID of the key that signed it, which Keys looks up
// (so keys can rotate: a credential verifies while its key is not retired).
// The registry keeps no list of credentials. A key of an org grants only
// that org's repositories ("<org>/…"), and pull of the platform's (Shared);
// a key of no org (the platform's, or the legacy key) grants any. A
// credential bound to a job attempt (IssueAttemptCredential) is accepted
// only while Leases says that attempt still holds its lease.
type Tokens struct {
	Keys   Keys
	Leases Leases // nil: attempt-bound credentials are refused
}

// Key is a signing key: its ID, which the credentials it signs carry, and
// whose it is (an org ID; OwnerPlatform or "" for a key of no org).
type Key struct {
	ID     string
	Owner  string
	Secret []byte
}

// OwnerPlatform owns the keys that sign what belongs to no org.
const OwnerPlatform = "platform"

// Shared is the prefix of the platform's repositories (runner releases),
// which any org's credential may pull.
const Shared = "outpost/"

// Keys looks a key up by ID ("": the legacy key, from before keys had IDs);
// an unknown or retired key is an error wrapping ErrUnknownKey (any other
// error, e.g. the database restarting, is tried again).
type Keys interface {
	RegistryKey(ctx context.Context, id string) (Key, error)
}

// StaticKeys are fixed keys (tests, tools); a pointer to them sees changes.
type StaticKeys []Key

// RegistryKey finds the key of that ID.
func (ks *StaticKeys) RegistryKey(_ context.Context, id string) (Key, error) {
	for _, k := range *ks {
		if k.ID == id {
			return k, nil
		}
	}
	return Key{}, fmt.Errorf("no registry key %q: %w", id, ErrUnknownKey)
}

// ErrUnknownKey: no key has that ID, or it is retired.
var ErrUnknownKey = errors.New("unknown or retired registry key")

// grants says whether a key of owner may grant action on repository.
func grants(owner, repository, action string) bool {
	switch {
	case owner == "" || owner == OwnerPlatform:
		return true
	case strings.HasPrefix(repository, owner+"/"):
		return true
	}
	return action == "pull" && strings.HasPrefix(repository, Shared)
}

// Leases says whether a job attempt still holds its lease: running, and the
// lease not yet expired.
type Leases interface {
	AttemptHoldsLease(ctx context.Context, jobID string, attempt int) (bool, error)
}

// claims is what a credential says, signed.
type claims struct {
	Subject string  `json:"sub"`
	Scopes  []Scope `json:"scopes"`
	Expires int64   `json:"exp"` // Unix seconds
	// Job and Attempt bind the credential to one attempt's lease.
	Job     string `json:"job,omitempty"`
	Attempt int    `json:"att,omitempty"`
	// KeyID names the key that signed it.
	KeyID string `json:"kid,omitempty"`
}

// IssueCredential makes a basic-auth credential for a Tokens registry with
// the same key: username is the subject (which must not contain ':'),
// password is base64url(JSON claims) + "." + base64url(HMAC-SHA256 of the
// first part). It is valid from now until now+ttl.
func IssueCredential(key Key, subject string, scopes []Scope, ttl time.Duration, now time.Time) (username, password string) {
	return issue(key, claims{Subject: subject, Scopes: scopes, Expires: now.Add(ttl).Unix()})
}

// IssueAttemptCredential is IssueCredential bound to one job attempt: a
// registry whose Tokens has Leases refuses it once that attempt's lease ends
// (lost, completed or cancelled), whatever its expiry says.
func IssueAttemptCredential(key Key, subject string, scopes []Scope, jobID string, attempt int, ttl time.Duration, now time.Time) (username, password string) {
	return issue(key, claims{Subject: subject, Scopes: scopes, Expires: now.Add(ttl).Unix(), Job: jobID, Attempt: attempt})
}

func issue(key Key, c claims) (username, password string) {
	c.KeyID = key.ID
	payload, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("encoding registry credential claims: %v", err)) // plain strings and ints
	}
	encoded := base64.RawURLEncoding.EncodeToString(payload)
	return c.Subject, encoded + "." + base64.RawURLEncoding.EncodeToString(sign(key.Secret, encoded))
}

// UploadSecret is the Config.UploadSecret of registries that share a key
// (the platform's): derived from it, so replicas agree without another
// secret to hand out.
func UploadSecret(key Key) []byte { return sign(key.Secret, "registry upload state") }

func sign(key []byte, encodedClaims string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(encodedClaims))
	return mac.Sum(nil)
}

// Authorize verifies the credential's signature (in constant time), expiry
// and subject, then that its scopes cover every access.
func (t Tokens) Authorize(ctx context.Context, username, password string, access []Access) error {
	c, owner, err := t.verify(ctx, username, password, time.Now())
	if err != nil {
		return err
	}
	if err := t.checkLease(ctx, c); err != nil {
		return err
	}
	for _, a := range access {
		if a.Type != "repository" || !grants(owner, a.Name, a.Action) ||
			!slices.ContainsFunc(c.Scopes, func(s Scope) bool { return s.covers(a.Name, a.Action) }) {
			return fmt.Errorf("credential of %q does not grant %s on %s %q", c.Subject, a.Action, a.Type, a.Name)
		}
	}
	return nil
}

// lookupTimeout bounds a key or lease lookup of one request: a lookup that
// fails (the database restarting) is tried again until then, or until the
// request's client goes away.
const lookupTimeout = 10 * time.Second

// lookUp calls look until it succeeds, fails for good (final), or
// lookupTimeout or ctx ends; it returns look's last error.
func lookUp(ctx context.Context, look func(context.Context) error, final func(error) bool) error {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	err := look(ctx)
	for wait := 100 * time.Millisecond; err != nil && !final(err); wait = min(2*wait, time.Second) {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		err = look(ctx)
	}
	return err
}

// checkLease refuses an attempt-bound credential whose attempt no longer
// holds its lease.
func (t Tokens) checkLease(ctx context.Context, c claims) error {
	if c.Job == "" {
		return nil
	}
	if t.Leases == nil {
		return fmt.Errorf("credential of %q is bound to a job attempt, and this registry cannot check leases", c.Subject)
	}
	var held bool
	err := lookUp(ctx, func(ctx context.Context) (err error) {
		held, err = t.Leases.AttemptHoldsLease(ctx, c.Job, c.Attempt)
		return err
	}, func(error) bool { return false })
	if err != nil {
		return fmt.Errorf("checking the lease of job %s attempt %d: %w", c.Job, c.Attempt, err)
	}
	if !held {
		return fmt.Errorf("credential of %q: job %s attempt %d no longer holds its lease", c.Subject, c.Job, c.Attempt)
	}
	return nil
}

var errBadToken = errors.New("invalid registry credential")

// verify checks the credential's signature with the key it names, its
// expiry and subject, and returns its claims and its key's owner. The
// claims are trusted only once the signature is checked.
func (t Tokens) verify(ctx context.Context, username, password string, now time.Time) (claims, string, error) {
	if t.Keys == nil {
		return claims{}, "", errors.New("registry has no credential keys")
	}
	encoded, sig, ok := strings.Cut(password, ".")
	if !ok {
		return claims{}, "", errBadToken
	}
	payload, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil {
		return claims{}, "", errBadToken
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return claims{}, "", errBadToken
	}
	var key Key
	err = lookUp(ctx, func(ctx context.Context) (err error) {
		key, err = t.Keys.RegistryKey(ctx, c.KeyID)
		return err
	}, func(err error) bool { return errors.Is(err, ErrUnknownKey) })
	if err != nil {
		return claims{}, "", errBadToken
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, sign(key.Secret, encoded)) {
		return claims{}, "", errBadToken
	}
	if now.Unix() >= c.Expires {
		return claims{}, "", fmt.Errorf("registry credential of %q expired at %s", c.Subject, time.Unix(c.Expires, 0).UTC().Format(time.RFC3339))
	}
	if username != c.Subject {
		return claims{}, "", errBadToken
	}
	return c, key.Owner, nil
}
