package gateway_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/api/gateway"
)

// GET /healthz on the gateway's listener: 200 while the database answers,
// 503 once the gateway drains (a readiness probe or a load balancer then
// sends runners to another replica).
func TestHealthzSaysWhetherToSendRunnersHere(t *testing.T) {
	e := newEnv(t, gateway.Config{})
	get := func() (int, string) {
		t.Helper()
		res, err := e.client.Get(e.url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get(); code != http.StatusOK || !strings.Contains(body, `"ok"`) {
		t.Fatalf("healthz: %d %s, want 200 ok", code, body)
	}
	e.g.Drain()
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, `"draining"`) {
		t.Errorf("healthz while draining: %d %s, want 503 draining", code, body)
	}
}
