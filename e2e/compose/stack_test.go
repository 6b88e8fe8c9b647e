package compose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/outpost-dev/outpost/internal/testutil"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// stack is one compose project of docker-compose.yml, on free host ports.
type stack struct {
	t       *testing.T
	root    string
	project string
	env     []string
	apiURL  string
	// gatewayURL is the gateway through the lb service's host port.
	gatewayURL string
}

// newStack makes the images and Docker Compose (skipping the test when no
// Docker engine can be started) and returns a project that is taken down,
// volumes included, when the test ends.
func newStack(t *testing.T) *stack {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", filepath.Join(root, "scripts/docker.sh"), "engine").CombinedOutput(); err != nil {
		t.Skipf("no Docker engine could be started (scripts/docker.sh engine: %v):\n%s", err, out)
	}
	start := time.Now()
	if out, err := exec.Command("bash", filepath.Join(root, "scripts/compose.sh"), "tool", "images").CombinedOutput(); err != nil {
		t.Fatalf("scripts/compose.sh tool images: %v\n%s", err, out)
	}
	t.Logf("images and docker compose ready in %s", time.Since(start).Round(time.Second))
	s := &stack{t: t, root: root, project: fmt.Sprintf("outpost-test-%d", os.Getpid())}
	ports := map[string]int{}
	for _, v := range []string{"OUTPOST_API_PORT", "OUTPOST_GATEWAY_PORT", "OUTPOST_REGISTRY_PORT", "TEMPORAL_UI_PORT"} {
		ports[v] = freePort(t)
		s.env = append(s.env, fmt.Sprintf("%s=%d", v, ports[v]))
	}
	s.apiURL = fmt.Sprintf("http://127.0.0.1:%d", ports["OUTPOST_API_PORT"])
	s.gatewayURL = fmt.Sprintf("http://127.0.0.1:%d", ports["OUTPOST_GATEWAY_PORT"])
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", s.compose("logs", "--no-color", "--tail", "60"))
		}
		s.compose("down", "-v", "--remove-orphans")
	})
	return s
}

func freePort(t *testing.T) int {
	p, err := testutil.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// compose runs docker compose on the project, with the local images'
// variables (scripts/compose-env.sh); it returns the output, failing the
// test on an error.
func (s *stack) compose(args ...string) string {
	out, err := s.run(args...)
	if err != nil {
		s.t.Errorf("docker compose %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (s *stack) run(args ...string) (string, error) {
	out, err := s.command(context.Background(), args...).CombinedOutput()
	return string(out), err
}

// command is docker compose on the project, with the local images' variables.
func (s *stack) command(ctx context.Context, args ...string) *exec.Cmd {
	full := append([]string{"-c", `. scripts/compose-env.sh && exec docker compose -p "$PROJECT" "$@"`, "compose"}, args...)
	cmd := exec.CommandContext(ctx, "bash", full...)
	cmd.Dir = s.root
	cmd.Env = append(append(os.Environ(), "PROJECT="+s.project), s.env...)
	// An interrupt, so that `docker compose run` stops its container.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 20 * time.Second
	return cmd
}

// up starts the stack (failing t, the running test, if it cannot) and waits for every service to be healthy (or done).
func (s *stack) up(t *testing.T, args ...string) time.Duration {
	start := time.Now()
	if out, err := s.run(append([]string{"up", "-d", "--wait", "--wait-timeout", "600"}, args...)...); err != nil {
		t.Fatalf("docker compose up: %v\n%s\nlogs:\n%s", err, out, s.compose("logs", "--no-color", "--tail", "40"))
	}
	return time.Since(start)
}

// demo reads the admin token and the install's ID the bootstrap service printed.
func (s *stack) demo() (token, install string) {
	logs := s.compose("logs", "--no-color", "bootstrap")
	tok := regexp.MustCompile(`export OUTPOST_TOKEN=(\S+)`).FindAllStringSubmatch(logs, -1)
	inst := regexp.MustCompile(`export INSTALL=(\S+)`).FindAllStringSubmatch(logs, -1)
	if len(tok) == 0 || len(inst) == 0 {
		s.t.Fatalf("bootstrap printed no token or install:\n%s", logs)
	}
	return tok[len(tok)-1][1], inst[len(inst)-1][1]
}

// call calls the API through the lb service's host port.
func (s *stack) call(token, method, path string, body, out any) int {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.apiURL+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return resp.StatusCode
}

// waitInstall waits until the install is active, failing on failed.
func (s *stack) waitInstall(token, id string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	var in struct {
		Status string `json:"status"`
	}
	for time.Now().Before(deadline) {
		s.call(token, "GET", "/v1/installs/"+id, nil, &in)
		switch in.Status {
		case "active":
			return
		case "failed":
			s.t.Fatalf("install %s failed; logs:\n%s", id, s.compose("logs", "--no-color", "--tail", "80", "worker", "install-runner"))
		}
		time.Sleep(2 * time.Second)
	}
	s.t.Fatalf("install %s not active after %s (status %q)", id, timeout, in.Status)
}

// canConnect says whether service can open a TCP connection to addr (bash's
// /dev/tcp in the runner image, outpost probe in the control plane's).
func (s *stack) canConnect(service, addr string) (bool, string) {
	var args []string
	if strings.Contains(service, "runner") {
		host, port, _ := net.SplitHostPort(addr)
		args = []string{"exec", "-T", service, "timeout", "5", "bash", "-c", "exec 3<>/dev/tcp/" + host + "/" + port}
	} else {
		args = []string{"exec", "-T", service, "/usr/local/bin/outpost", "probe", "-timeout", "5s", "tcp://" + addr}
	}
	out, err := s.run(args...)
	return err == nil, out
}

func (s *stack) containerIP(service, network string) string {
	id := strings.TrimSpace(s.compose("ps", "-q", service))
	out, err := exec.Command("docker", "inspect", "-f",
		fmt.Sprintf(`{{(index .NetworkSettings.Networks "%s_%s").IPAddress}}`, s.project, network), id).CombinedOutput()
	if err != nil {
		s.t.Fatalf("docker inspect %s: %v\n%s", service, err, out)
	}
	return strings.TrimSpace(string(out))
}
