package compose

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/protocol"
)

// behindProxies checks that lb and edge name each client to the gateway
// (the PROXY protocol): the host, through lb, fails authentication until
// it is answered 429; the build runner, through the same lb, and the
// install runner, through edge, are still answered 401.
func (s *stack) behindProxies(t *testing.T) {
	token := func(who, guess int) string {
		return fmt.Sprintf("%s%04d%04d%s", protocol.RunnerTokenPrefix, who, guess, strings.Repeat("x", 44))
	}
	var last int
	for i := range authlimit.DefaultBurst + 1 {
		req, err := http.NewRequest("POST", s.gatewayURL+protocol.PathRunnerHeartbeat, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token(1, i))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if last = res.StatusCode; i < authlimit.DefaultBurst && last != http.StatusUnauthorized {
			t.Fatalf("guess %d from the host through lb: %d, want 401", i+1, last)
		}
	}
	if last != http.StatusTooManyRequests {
		t.Fatalf("the host over the limit, through lb: %d, want 429", last)
	}
	for i, via := range []struct{ service, addr string }{{"build-runner", "lb/8081"}, {"install-runner", "edge/8081"}} {
		req := fmt.Sprintf(`POST %s HTTP/1.0\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
			protocol.PathRunnerHeartbeat, token(2+i, 0))
		out, err := s.run("exec", "-T", via.service, "timeout", "10", "bash", "-c",
			"exec 3<>/dev/tcp/"+via.addr+" && printf '"+req+"' >&3 && read -r line <&3 && echo \"$line\"")
		if err != nil || !strings.Contains(out, " 401 ") {
			t.Errorf("%s through %s, after the host's guesses: %v %q, want 401", via.service, via.addr, err, out)
		}
	}
	if logs := s.compose("logs", "--no-color", "api"); !strings.Contains(logs, "over the limit from one source") {
		t.Errorf("the API's log does not say a source is over the limit:\n%s", logs)
	}
}
