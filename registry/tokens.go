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

// Tokens accepts short-lived credentials made by IssueCredential with the
// same key: each names its subject (the username), the repositories and
// actions it grants, and when it expires. The registry keeps no list of
// them; the key is the only secret. A credential bound to a job attempt
// (IssueAttemptCredential) is accepted only while Leases says that attempt
// still holds its lease.
type Tokens struct {
	Key    []byte
	Leases Leases // nil: attempt-bound credentials are refused
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
}

// IssueCredential makes a basic-auth credential for a Tokens registry with
// the same key: username is the subject (which must not contain ':'),
// password is base64url(JSON claims) + "." + base64url(HMAC-SHA256 of the
// first part). It is valid from now until now+ttl.
func IssueCredential(key []byte, subject string, scopes []Scope, ttl time.Duration, now time.Time) (username, password string) {
	return issue(key, claims{Subject: subject, Scopes: scopes, Expires: now.Add(ttl).Unix()})
}

// IssueAttemptCredential is IssueCredential bound to one job attempt: a
// registry whose Tokens has Leases refuses it once that attempt's lease ends
// (lost, completed or cancelled), whatever its expiry says.
func IssueAttemptCredential(key []byte, subject string, scopes []Scope, jobID string, attempt int, ttl time.Duration, now time.Time) (username, password string) {
	return issue(key, claims{Subject: subject, Scopes: scopes, Expires: now.Add(ttl).Unix(), Job: jobID, Attempt: attempt})
}

func issue(key []byte, c claims) (username, password string) {
	payload, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("encoding registry credential claims: %v", err)) // plain strings and ints
	}
	encoded := base64.RawURLEncoding.EncodeToString(payload)
	return c.Subject, encoded + "." + base64.RawURLEncoding.EncodeToString(sign(key, encoded))
}

// UploadSecret is the Config.UploadSecret of registries that share the key:
// derived from it, so replicas agree without another secret to hand out.
func (t Tokens) UploadSecret() []byte { return sign(t.Key, "registry upload state") }

func sign(key []byte, encodedClaims string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(encodedClaims))
	return mac.Sum(nil)
}

// Authorize verifies the credential's signature (in constant time), expiry
// and subject, then that its scopes cover every access.
func (t Tokens) Authorize(ctx context.Context, username, password string, access []Access) error {
	c, err := t.verify(username, password, time.Now())
	if err != nil {
		return err
	}
	if err := t.checkLease(ctx, c); err != nil {
		return err
	}
	for _, a := range access {
		if a.Type != "repository" || !slices.ContainsFunc(c.Scopes, func(s Scope) bool { return s.covers(a.Name, a.Action) }) {
			return fmt.Errorf("credential of %q does not grant %s on %s %q", c.Subject, a.Action, a.Type, a.Name)
		}
	}
	return nil
}

// leaseCheckTimeout bounds the lease lookup of one request: a lookup that
// fails (the database restarting) is tried again until then, or until the
// request's client goes away.
const leaseCheckTimeout = 10 * time.Second

// checkLease refuses an attempt-bound credential whose attempt no longer
// holds its lease.
func (t Tokens) checkLease(ctx context.Context, c claims) error {
	if c.Job == "" {
		return nil
	}
	if t.Leases == nil {
		return fmt.Errorf("credential of %q is bound to a job attempt, and this registry cannot check leases", c.Subject)
	}
	ctx, cancel := context.WithTimeout(ctx, leaseCheckTimeout)
	defer cancel()
	held, err := t.Leases.AttemptHoldsLease(ctx, c.Job, c.Attempt)
	for wait := 100 * time.Millisecond; err != nil; wait = min(2*wait, time.Second) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("checking the lease of job %s attempt %d: %w", c.Job, c.Attempt, err)
		case <-time.After(wait):
		}
		held, err = t.Leases.AttemptHoldsLease(ctx, c.Job, c.Attempt)
	}
	if !held {
		return fmt.Errorf("credential of %q: job %s attempt %d no longer holds its lease", c.Subject, c.Job, c.Attempt)
	}
	return nil
}

var errBadToken = errors.New("invalid registry credential")

func (t Tokens) verify(username, password string, now time.Time) (claims, error) {
	if len(t.Key) == 0 {
		return claims{}, errors.New("registry has no credential key")
	}
	encoded, sig, ok := strings.Cut(password, ".")
	if !ok {
		return claims{}, errBadToken
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, sign(t.Key, encoded)) {
		return claims{}, errBadToken
	}
	payload, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil {
		return claims{}, errBadToken
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return claims{}, errBadToken
	}
	if now.Unix() >= c.Expires {
		return claims{}, fmt.Errorf("registry credential of %q expired at %s", c.Subject, time.Unix(c.Expires, 0).UTC().Format(time.RFC3339))
	}
	if username != c.Subject {
		return claims{}, errBadToken
	}
	return c, nil
}
