package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/protocol"
)

const attacker = "203.0.113.1"

// limitedEnv is a gateway whose limiter allows 2 failures per source or
// prefix, then one an hour; it believes X-Forwarded-For from loopback, so a
// test can speak from several sources (a request without it is 127.0.0.1).
func limitedEnv(t *testing.T) *env {
	proxies, err := authlimit.ParseCIDRs("127.0.0.0/8,::1")
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, gateway.Config{AuthLimiter: authlimit.New(authlimit.Config{Burst: 2, Every: time.Hour, TrustedProxies: proxies})})
}

// attempt sends a request from source, with auth applied to it.
func (e *env) attempt(method, path, source, body string, auth func(*http.Request)) (*http.Response, protocol.Error) {
	e.tb.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", source)
	auth(req)
	res, err := e.client.Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var apiErr protocol.Error
	_ = json.Unmarshal(data, &apiErr)
	return res, apiErr
}

// guessUntilLimited sends 2 wrong credentials (401), then asserts the third,
// another guess from the same source, is 429 with Retry-After.
func guessUntilLimited(t *testing.T, try func(guess int) (*http.Response, protocol.Error)) {
	t.Helper()
	for i := range 2 {
		if res, body := try(i); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d %+v, want 401", i+1, res.StatusCode, body)
		}
	}
	res, body := try(2)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "3600" || body.Code != protocol.CodeRateLimited {
		t.Fatalf("guess 3: %d %+v, Retry-After %q; want 429 rate_limited, Retry-After 3600", res.StatusCode, body, res.Header.Get("Retry-After"))
	}
}

func bearer(tok string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
}

func noAuth(*http.Request) {}

// Guessing registration tokens, runner tokens or state credentials is
// answered 429 after the burst; valid credentials are accepted from any
// source, the guesser's too (runners behind one NAT or load balancer).
func TestGuessingIsLimited(t *testing.T) {
	t.Run("registration tokens", func(t *testing.T) {
		e := limitedEnv(t)
		guessUntilLimited(t, func(i int) (*http.Response, protocol.Error) {
			body := `{"registration_token":"` + protocol.RegistrationTokenPrefix + strings.Repeat(string(rune('a'+i)), 52) + `"}`
			return e.attempt(http.MethodPost, protocol.PathRegister, attacker, body, noAuth)
		})
		_, _, reg := e.newInstall("victim")
		if res, body := e.attempt(http.MethodPost, protocol.PathRegister, attacker, `{"registration_token":"`+reg+`"}`, noAuth); res.StatusCode != http.StatusOK {
			t.Fatalf("a valid registration from the attacker's source: %d %+v, want 200", res.StatusCode, body)
		}
		e.newRunner("elsewhere") // registers from 127.0.0.1
	})
	t.Run("runner tokens", func(t *testing.T) {
		e := limitedEnv(t)
		r := e.newRunner("victim")
		// The victim runs behind the attacker's address (one NAT, one load
		// balancer) and called before the guessing began.
		if res, body := e.attempt(http.MethodPost, protocol.PathRunnerHeartbeat, attacker, `{}`, bearer(r.Token)); res.StatusCode != http.StatusOK {
			t.Fatalf("the valid runner before the guessing: %d %+v, want 200", res.StatusCode, body)
		}
		guessUntilLimited(t, func(i int) (*http.Response, protocol.Error) {
			// One prefix, other secrets.
			return e.attempt(http.MethodPost, protocol.PathRunnerHeartbeat, attacker, `{}`,
				bearer(protocol.RunnerTokenPrefix+strings.Repeat("a", 8)+strings.Repeat(string(rune('a'+i)), 44)))
		})
		// The same prefix from another source is refused too.
		if res, _ := e.attempt(http.MethodPost, protocol.PathRunnerHeartbeat, "203.0.113.2", `{}`,
			bearer(protocol.RunnerTokenPrefix+strings.Repeat("a", 52))); res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("the attacker's prefix from another source: %d, want 429", res.StatusCode)
		}
		for _, from := range []string{"198.51.100.7", "198.51.100.7", attacker, attacker, attacker} {
			if res, body := e.attempt(http.MethodPost, protocol.PathRunnerHeartbeat, from, `{}`, bearer(r.Token)); res.StatusCode != http.StatusOK {
				t.Fatalf("the valid runner from %s: %d %+v, want 200", from, res.StatusCode, body)
			}
		}
		// A token the gateway never saw good is accepted from there too.
		fresh := e.newRunner("fresh")
		if res, body := e.attempt(http.MethodPost, protocol.PathRunnerHeartbeat, attacker, `{}`, bearer(fresh.Token)); res.StatusCode != http.StatusOK {
			t.Fatalf("a runner token first seen from the attacker's source: %d %+v, want 200", res.StatusCode, body)
		}
	})
	t.Run("state credentials", func(t *testing.T) {
		e := limitedEnv(t)
		guessUntilLimited(t, func(i int) (*http.Response, protocol.Error) {
			return e.attempt(http.MethodGet, "/runner/v1/state/ws", attacker, "", func(r *http.Request) {
				r.SetBasicAuth("job_x", "opst_"+strings.Repeat(string(rune('a'+i)), 52))
			})
		})
	})
}
