package devserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

const taskQueue = "devserver-test"

func greetActivity(_ context.Context, name string) (string, error) {
	return "hello, " + name, nil
}

func greetWorkflow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, greetActivity, name).Get(ctx, &out)
	return out, err
}

// quietSDKLogger keeps the SDK client/worker at warn level on stderr (its
// default logger prints every worker start at info to stdout).
func quietSDKLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

func dial(t *testing.T, s *Server) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  s.FrontendAddress(),
		Namespace: s.Namespace(),
		Logger:    quietSDKLogger(),
	})
	if err != nil {
		t.Fatalf("dial %s: %v", s.FrontendAddress(), err)
	}
	return c
}

func TestPersistentRestartWithUI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "state") // Start must create it

	// --- first run: with UI, run a workflow to completion ---
	t0 := time.Now()
	s, err := Start(ctx, Options{DataDir: dir, Namespace: "outpost-test"})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("first start (schema setup) took %v; frontend %s, UI %s", time.Since(t0), s.FrontendAddress(), s.UIURL())
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Stop()
		}
	}()

	if got := s.Namespace(); got != "outpost-test" {
		t.Errorf("Namespace() = %q, want outpost-test", got)
	}
	if !strings.HasPrefix(s.FrontendAddress(), "127.0.0.1:") {
		t.Errorf("FrontendAddress() = %q, want 127.0.0.1:PORT", s.FrontendAddress())
	}
	if !strings.HasPrefix(s.UIURL(), "http://127.0.0.1:") {
		t.Errorf("UIURL() = %q, want http://127.0.0.1:PORT", s.UIURL())
	}
	if fi, err := os.Stat(filepath.Join(dir, DBFileName)); err != nil || fi.Size() == 0 {
		t.Fatalf("database file: %v (info %v)", err, fi)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.init-*")); len(tmps) != 0 {
		t.Errorf("schema temp files left behind: %v", tmps)
	}

	c := dial(t, s)
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterActivity(greetActivity)
	if err := w.Start(); err != nil {
		t.Fatalf("worker start: %v", err)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "devserver-greet", TaskQueue: taskQueue}, greetWorkflow, "outpost")
	if err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if got != "hello, outpost" {
		t.Fatalf("workflow result = %q, want %q", got, "hello, outpost")
	}
	runID := run.GetRunID()

	// The web UI is served in-process and answers with its HTML shell.
	resp, err := http.Get(s.UIURL())
	if err != nil {
		t.Fatalf("GET UI: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", s.UIURL(), resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("GET %s: Content-Type %q, want text/html", s.UIURL(), ct)
	}
	if !strings.Contains(strings.ToLower(string(body)), "<html") {
		t.Errorf("GET %s: body is not HTML: %.200q", s.UIURL(), body)
	}

	// ...and proxies its API to our frontend.
	resp, err = http.Get(s.UIURL() + "/api/v1/namespaces/outpost-test")
	if err != nil {
		t.Fatalf("GET UI API: %v", err)
	}
	body, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"outpost-test"`) {
		t.Errorf("GET UI API namespace: status %d, body %.300q", resp.StatusCode, body)
	}

	checkUIReadOnly(t, s.UIURL(), "outpost-test", "devserver-greet")

	w.Stop()
	c.Close()
	t0 = time.Now()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("stop took %v", time.Since(t0))
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	stopped = true
	if resp, err := http.Get(s.UIURL()); err == nil {
		_ = resp.Body.Close()
		t.Errorf("UI still answering after Stop (status %d)", resp.StatusCode)
	}

	// --- second run: same DataDir, headless; the history is still there ---
	t0 = time.Now()
	s2, err := Start(ctx, Options{DataDir: dir, Namespace: "outpost-test", UIPort: -1})
	if err != nil {
		t.Fatalf("second Start: %v", err)
	}
	defer func() { _ = s2.Stop() }()
	t.Logf("restart took %v; frontend %s", time.Since(t0), s2.FrontendAddress())
	if s2.UIURL() != "" {
		t.Errorf("headless UIURL() = %q, want empty", s2.UIURL())
	}

	c2 := dial(t, s2)
	defer c2.Close()
	desc, err := c2.DescribeWorkflowExecution(ctx, "devserver-greet", runID)
	if err != nil {
		t.Fatalf("DescribeWorkflowExecution after restart: %v", err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if st := info.GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("status after restart = %v, want COMPLETED", st)
	}
	if info.GetExecution().GetRunId() != runID {
		t.Errorf("run ID after restart = %q, want %q", info.GetExecution().GetRunId(), runID)
	}
	if info.GetType().GetName() != "greetWorkflow" {
		t.Errorf("workflow type after restart = %q, want greetWorkflow", info.GetType().GetName())
	}
	got = ""
	if err := c2.GetWorkflow(ctx, "devserver-greet", runID).Get(ctx, &got); err != nil || got != "hello, outpost" {
		t.Errorf("result after restart = %q, %v; want %q", got, err, "hello, outpost")
	}

	if err := s2.Stop(); err != nil {
		t.Fatalf("Stop after restart: %v", err)
	}
}

func TestInMemoryHeadless(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	s, err := Start(ctx, Options{UIPort: -1})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if s.Namespace() != "default" {
		t.Errorf("Namespace() = %q, want default", s.Namespace())
	}
	if s.UIURL() != "" {
		t.Errorf("UIURL() = %q, want empty", s.UIURL())
	}

	c := dial(t, s)
	resp, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"})
	c.Close()
	if err != nil {
		t.Fatalf("DescribeNamespace: %v", err)
	}
	if st := resp.GetNamespaceInfo().GetState(); st != enumspb.NAMESPACE_STATE_REGISTERED {
		t.Errorf("namespace state = %v, want REGISTERED", st)
	}

	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{LogLevel: "loud"}, {UIPort: -2}, {IP: "not-an-ip"}} {
		if s, err := Start(context.Background(), o); err == nil {
			_ = s.Stop()
			t.Errorf("Start(%+v) succeeded, want error", o)
		}
	}
}

// checkUIReadOnly signals a workflow through the UI's API, with its CSRF
// token as its own pages would: refused (405), the UI being read-only.
func checkUIReadOnly(t *testing.T, uiURL, namespace, workflowID string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.Get(uiURL)
	if err != nil {
		t.Fatalf("GET UI: %v", err)
	}
	resp.Body.Close()
	u, _ := url.Parse(uiURL)
	var csrf string
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "_csrf" {
			csrf = ck.Value
		}
	}
	if csrf == "" {
		t.Fatalf("the UI set no _csrf cookie: %v", jar.Cookies(u))
	}
	req, _ := http.NewRequest(http.MethodPost, uiURL+"/api/v1/namespaces/"+namespace+"/workflows/"+workflowID+"/signal/approval",
		strings.NewReader(`{"input":{"payloads":[]}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatalf("POST signal through the UI: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("a signal through the UI: %d, want 405 (write actions off)", resp.StatusCode)
	}
}
