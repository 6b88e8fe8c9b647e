package compose

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/store/seal"
)

// TestComposeStack brings docker-compose.yml up with the local images, and
// checks the demo, the topology and a restart.
func TestComposeStack(t *testing.T) {
	s := newStack(t)
	start := time.Now()
	t.Logf("docker compose up (healthy, bootstrap done) in %s", s.up(t).Round(time.Second))
	token, install := s.demo()
	s.waitInstall(token, install, 10*time.Minute)
	t.Logf("demo install provisioned %s after docker compose up began", time.Since(start).Round(time.Second))
	kek := s.kekID(t, "made")

	t.Run("debug command on the runner", func(t *testing.T) {
		var cmd struct {
			ID string `json:"id"`
		}
		if code := s.call(token, "POST", "/v1/installs/"+install+"/commands",
			map[string]any{"command": []string{"sh", "-c", "echo hello from $(hostname)"}}, &cmd); code != 201 && code != 202 && code != 200 {
			t.Fatalf("POST commands: %d", code)
		}
		var got struct {
			Status   string `json:"status"`
			ExitCode *int   `json:"exit_code"`
			Output   string `json:"output"`
		}
		s.call(token, "GET", "/v1/installs/"+install+"/commands/"+cmd.ID+"?wait=60", nil, &got)
		if got.ExitCode == nil || *got.ExitCode != 0 || !strings.Contains(got.Output, "hello from") {
			t.Fatalf("command: %+v", got)
		}
	})

	t.Run("topology", func(t *testing.T) {
		for _, addr := range []string{"edge:8081", "edge:5000"} {
			if ok, out := s.canConnect("install-runner", addr); !ok {
				t.Errorf("install runner cannot reach %s: %s", addr, out)
			}
		}
		for _, addr := range []string{"postgres:5432", "temporal:7233", "api:8080", "api:8081", "worker:80", "lb:8080"} {
			if ok, _ := s.canConnect("install-runner", addr); ok {
				t.Errorf("install runner reaches %s", addr)
			}
		}
		ip := s.containerIP("install-runner", "install")
		for _, from := range []string{"api", "worker", "lb"} {
			ok, out := s.canConnect(from, ip+":8090")
			if ok || strings.Contains(out, "connection refused") {
				t.Errorf("%s has a route to the install runner (%s): %s", from, ip, out)
			}
		}
	})

	t.Run("clients behind lb told apart", s.behindProxies)

	t.Run("bad input", s.badInput)

	t.Run("two APIs and two workers", func(t *testing.T) {
		s.up(t, "--scale", "api=2", "--scale", "worker=2")
		for _, svc := range []string{"api", "worker"} {
			if ids := strings.Fields(s.compose("ps", "-q", "--status", "running", svc)); len(ids) != 2 {
				t.Fatalf("%s: %d running replicas, want 2", svc, len(ids))
			}
		}
		s.reprovision(t, token, install)
	})

	t.Run("down and up keeps installs", func(t *testing.T) {
		var before, after struct {
			Operations []struct{ ID, Status string } `json:"operations"`
		}
		s.call(token, "GET", "/v1/installs/"+install+"/operations", nil, &before)
		s.compose("down")
		s.up(t)
		s.call(token, "GET", "/v1/installs/"+install+"/operations", nil, &after)
		if len(before.Operations) == 0 || fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("operations before down: %v, after up: %v", before, after)
		}
		var in struct {
			Status string `json:"status"`
		}
		if s.call(token, "GET", "/v1/installs/"+install, nil, &in); in.Status != "active" {
			t.Fatalf("install after down and up: %q", in.Status)
		}
		if again := s.kekID(t, "kept"); again != kek {
			t.Fatalf("key-encryption key after down and up: %s, made %s", again, kek)
		}
		// The sandbox's registry and the cluster went with the runner's
		// container: the reprovision's plan restarts them, and an input
		// update deploys into them.
		s.reprovision(t, token, install)
		var updated struct {
			Operation *operation `json:"operation"`
		}
		if code := s.call(token, "PATCH", "/v1/installs/"+install+"/inputs", map[string]any{
			"set": []map[string]any{{"name": "api_replicas", "value": "3"}}, "apply": true}, &updated); code != 200 || updated.Operation == nil {
			t.Fatalf("PATCH inputs with apply: %d %+v", code, updated)
		}
		s.waitOperation(t, token, install, "update_inputs after down and up", *updated.Operation)
	})

	t.Run("another OUTPOST_KEK is refused, the volume's key kept", func(t *testing.T) {
		out, err := s.run("run", "--rm", "--no-deps", "-T", "-e", "OUTPOST_KEK="+strings.TrimSpace(seal.GenerateKeyText()), "kek")
		if err == nil || !strings.Contains(out, "holds key "+kek) || !strings.Contains(out, "rotate") {
			t.Fatalf("kek with another OUTPOST_KEK: %v; want a failure naming %s and a rotation:\n%s", err, kek, out)
		}
		out = s.compose("run", "--rm", "--no-deps", "-T", "kek")
		if !strings.Contains(out, "kept key-encryption key "+kek) {
			t.Fatalf("kek after the refusal: want %s kept:\n%s", kek, out)
		}
	})
}

type operation struct{ ID, Status, Error string }

// reprovision runs a reprovision of the install to its success.
func (s *stack) reprovision(t *testing.T, token, install string) {
	t.Helper()
	var op operation
	if code := s.call(token, "POST", "/v1/installs/"+install+"/reprovision", nil, &op); code != 202 {
		t.Fatalf("POST reprovision: %d", code)
	}
	s.waitOperation(t, token, install, "reprovision", op)
}

// waitOperation waits up to 5 minutes for the operation to succeed.
func (s *stack) waitOperation(t *testing.T, token, install, what string, op operation) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Minute); op.Status != "succeeded"; {
		if op.Status == "failed" || op.Status == "cancelled" || time.Now().After(deadline) {
			t.Fatalf("%s: %+v", what, op)
		}
		s.call(token, "GET", "/v1/installs/"+install+"/operations/"+op.ID+"?wait=30", nil, &op)
	}
}

// kekID is the key-encryption key the kek service's log says it made or kept.
func (s *stack) kekID(t *testing.T, verb string) string {
	t.Helper()
	logs := s.compose("logs", "--no-color", "kek")
	m := regexp.MustCompile(verb + ` key-encryption key (local-[0-9a-f]{16}) in /run/outpost-kek/kek`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("the kek service's log says no key %s:\n%s", verb, logs)
	}
	return m[1]
}
