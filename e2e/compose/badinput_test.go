package compose

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// badInput checks, on a running stack, that each service says what is
// wrong: a runner with no token, a wrong token or a wrong gateway URL, and
// the control plane started while PostgreSQL is down.
func (s *stack) badInput(t *testing.T) {
	runner := []string{"run", "--rm", "--no-deps", "-T", "install-runner", "run"}
	t.Run("runner without a token", func(t *testing.T) {
		out, err := s.run(append(runner, "--gateway-url=http://edge:8081")...)
		if err == nil || !strings.Contains(out, "--token is required") {
			t.Errorf("want an exit naming --token, got %v:\n%s", err, out)
		}
	})
	t.Run("runner with a wrong token", func(t *testing.T) {
		out, err := s.run(append(runner, "--gateway-url=http://edge:8081", "--token=oprn_wrong")...)
		if err == nil || !strings.Contains(out, "refused the runner token") {
			t.Errorf("want an exit saying the token was refused, got %v:\n%s", err, out)
		}
	})
	t.Run("runner with a wrong gateway URL", func(t *testing.T) {
		// It retries for ever, saying why: its log after 15 s.
		name := s.project + "-wrong-gateway"
		s.compose("run", "-d", "--no-deps", "--name", name, "install-runner", "run", "--gateway-url=http://nowhere:8081", "--token-file=/run/outpost/token")
		defer exec.Command("docker", "rm", "-f", name).Run()
		time.Sleep(15 * time.Second)
		out, _ := exec.Command("docker", "logs", name).CombinedOutput()
		if !strings.Contains(string(out), "failed, retrying") || !strings.Contains(string(out), "nowhere") {
			t.Errorf("want retries naming the gateway's host:\n%s", out)
		}
	})
	t.Run("PostgreSQL down", func(t *testing.T) {
		s.compose("stop", "postgres")
		defer s.compose("start", "postgres")
		for _, svc := range []string{"migrate", "api", "worker"} {
			out := s.runFor(90*time.Second, "run", "--rm", "--no-deps", "-T", svc)
			if !strings.Contains(out, "postgres") || !strings.Contains(strings.ToLower(out), "connect") {
				t.Errorf("%s with PostgreSQL down: want an error naming the database connection:\n%s", svc, out)
			}
		}
	})
	t.Run("nothing half-migrated", func(t *testing.T) {
		if out := s.compose("up", "-d", "--wait", "postgres"); t.Failed() {
			t.Fatal(out)
		}
		out := s.compose("run", "--rm", "--no-deps", "-T", "migrate")
		if !strings.Contains(out, "schema version") {
			t.Errorf("migrate after PostgreSQL came back:\n%s", out)
		}
	})
}

// runFor runs docker compose for at most d and returns its output.
func (s *stack) runFor(d time.Duration, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	out, _ := s.command(ctx, args...).CombinedOutput()
	return string(out)
}
