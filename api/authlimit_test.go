package api

import (
	"context"
	"github.com/outpost-dev/outpost/api/wire"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// limitedEnv is the API whose limiter allows 3 failures per source or
// prefix, then one an hour; it believes X-Forwarded-For from loopback, so a
// test can speak from several sources.
func limitedEnv(t *testing.T) *testEnv {
	proxies, err := authlimit.ParseCIDRs("127.0.0.0/8,::1")
	if err != nil {
		t.Fatal(err)
	}
	return newTestEnvWithOps(t, nil, func(cfg *Config) {
		cfg.AuthLimiter = authlimit.New(authlimit.Config{Burst: 3, Every: time.Hour, TrustedProxies: proxies})
	})
}

// getOrgFrom calls GET /v1/org with token from the source address.
func (e *testEnv) getOrgFrom(source, token string) response {
	e.t.Helper()
	req := newRequest(e.t, e, http.MethodGet, "/v1/org")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Forwarded-For", source)
	return e.do(req)
}

// Guessing API tokens: after 3 failures a source and a prefix are answered
// 429 with Retry-After on each further failure; a valid token is accepted
// from any source, the guesser's too (behind the compose stack's lb every
// client may share one address).
func TestAPITokenGuessingIsLimited(t *testing.T) {
	e := limitedEnv(t)
	const attacker, victim = "203.0.113.1", "198.51.100.7"
	guess := protocol.APITokenPrefix + "aaaaaaaa"
	for i := range 3 {
		if res := e.getOrgFrom(attacker, guess+strings.Repeat("x", i+40)); res.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %s, want 401", i+1, res)
		}
	}
	for _, tc := range []struct{ name, source, token string }{
		{"the same source and prefix", attacker, guess + "yyyy"},
		{"the same source, another prefix", attacker, protocol.APITokenPrefix + "bbbbbbbbzzzz"},
		{"another source, the same prefix", "203.0.113.2", guess + "zzzz"},
	} {
		res := e.getOrgFrom(tc.source, tc.token)
		if res.status != http.StatusTooManyRequests || res.header.Get("Retry-After") != "3600" ||
			res.apiError(t).Code != protocol.CodeRateLimited {
			t.Fatalf("%s: %s, Retry-After %q; want 429 rate_limited, Retry-After 3600", tc.name, res, res.header.Get("Retry-After"))
		}
	}
	for i := range 30 {
		e.getOrgFrom(attacker, guess+strings.Repeat("w", i+1))
	}
	for _, source := range []string{attacker, victim} {
		if res := e.getOrgFrom(source, e.token); res.status != http.StatusOK {
			t.Fatalf("a valid token from %s after 30 more bad ones from the attacker: %s, want 200", source, res)
		}
	}
	// Successes are never counted: the victim's source and prefix are free.
	if res := e.getOrgFrom(victim, protocol.APITokenPrefix+"cccccccc"); res.status != http.StatusUnauthorized {
		t.Fatalf("a first failure from the victim's source: %s, want 401", res)
	}
}

// Without a trusted proxy, X-Forwarded-For is not believed: an attacker
// cannot move to a new source by sending it.
func TestForwardedForIsIgnoredWithoutTrustedProxies(t *testing.T) {
	e := newTestEnvWithOps(t, nil, func(cfg *Config) {
		cfg.AuthLimiter = authlimit.New(authlimit.Config{Burst: 2, Every: time.Hour})
	})
	for i := range 3 {
		res := e.getOrgFrom("203.0.113."+string(rune('1'+i)), protocol.APITokenPrefix+string(rune('a'+i))+"bcdefghij")
		if want := []int{401, 401, 429}[i]; res.status != want {
			t.Fatalf("guess %d with a new X-Forwarded-For: %s, want %d", i+1, res, want)
		}
	}
}

// A revoked token's refused calls are audited until the limiter answers
// 429; those go unrecorded, so whoever holds a leaked token cannot flood
// the org's audit log.
func TestRateLimitedCallsAreNotAudited(t *testing.T) {
	e := limitedEnv(t)
	var old wire.NewToken
	e.call("POST", "/v1/tokens", map[string]any{"name": "leaked"}, 201, &old)
	e.call("DELETE", "/v1/tokens/"+old.ID, nil, 204, nil)
	want := []int{401, 401, 401, 429, 429, 429, 429, 429}
	for i, status := range want {
		if res := e.send("POST", "/v1/apps", old.Token, map[string]any{"name": "late"}); res.status != status {
			t.Fatalf("call %d with the revoked token: %s, want %d", i+1, res, status)
		}
	}
	evs, err := e.store.ListAuditEvents(context.Background(), e.org.ID, store.AuditFilter{TokenID: old.ID, Action: "createApp"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("%d createApp events of the revoked token, want the 3 refused with 401", len(evs))
	}
	for _, ev := range evs {
		if ev.Status != http.StatusUnauthorized {
			t.Errorf("event %+v, want status 401", ev)
		}
	}
}
