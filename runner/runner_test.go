package runner

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
)

// startRunner runs a runner for cfg against g. stop ends it and returns Run's
// error; wait returns Run's error once Run ends by itself.
func startRunner(t *testing.T, g *testGateway, cfg Config) (stop, wait func() error, log *testutil.LockedBuffer) {
	t.Helper()
	log = &testutil.LockedBuffer{}
	cfg.GatewayURL = g.start()
	cfg.WorkDir = t.TempDir()
	cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.retry = fastRetry
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	t.Cleanup(cancel)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("runner log:\n%s", log)
		}
	})
	wait = func() error {
		select {
		case err := <-ran:
			return err
		case <-time.After(60 * time.Second): // only a hang guard
			t.Fatal("Run did not return")
			return nil
		}
	}
	stop = func() error {
		cancel()
		return wait()
	}
	return stop, wait, log
}

func noopJob(id string, outputs map[string]string) protocol.Job {
	m, _ := json.Marshal(protocol.NoopManifest{Lines: []string{"hi from " + id}, Outputs: outputs})
	return protocol.Job{ID: id, Type: protocol.JobTypeNoop, Attempt: 1, Manifest: m}
}

// runOneJob queues a job, waits for its completion and returns it.
func runOneJob(g *testGateway, job protocol.Job) protocol.CompleteRequest {
	g.update(func() { g.queue = append(g.queue, job) })
	g.waitFor("the completion of "+job.ID, func() bool { return len(g.completions[job.ID]) > 0 })
	return g.completion(job.ID)
}

func TestRunnerRegistersSavesItsTokenAndRunsJobs(t *testing.T) {
	g := newTestGateway(t)
	tokenFile := filepath.Join(t.TempDir(), "state", "runner-token")
	cfg := Config{Token: g.registrationToken, TokenFile: tokenFile, Name: "test-runner"}

	stop, _, log := startRunner(t, g, cfg)
	done := runOneJob(g, noopJob("job-a", map[string]string{"k": "v"}))
	if err := stop(); err != nil {
		t.Fatalf("Run after shutdown: %v", err)
	}
	g.waitFor("the end of the stopped runner's claim", func() bool { return g.polling == 0 })
	if done.Status != protocol.StatusSucceeded || string(done.Outputs) != `{"k":"v"}` {
		t.Errorf("completion %+v", done)
	}
	if !g.logged("job-a", protocol.StreamStdout, "hi from job-a") {
		t.Error("the job's output is not in its log")
	}

	saved, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(saved) != g.runnerToken+"\n" {
		t.Errorf("token file holds %q, want the runner token", saved)
	}
	if info, _ := os.Stat(tokenFile); info.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", info.Mode().Perm())
	}

	// Started again with the same (one-time) registration token, the runner
	// uses the saved runner token and does not register again.
	stop, _, log2 := startRunner(t, g, cfg)
	runOneJob(g, noopJob("job-b", nil))
	if err := stop(); err != nil {
		t.Fatalf("second Run: %v", err)
	}
	if g.registrations != 1 {
		t.Errorf("%d registrations, want 1", g.registrations)
	}

	for _, l := range []string{log.String(), log2.String()} {
		if strings.Contains(l, "secret") {
			t.Errorf("a token is in the runner's log:\n%s", l)
		}
	}
}

func TestRunnerStopsWhenItsTokenIsRevoked(t *testing.T) {
	g := newTestGateway(t)
	g.intervals.RunnerHeartbeatMS = 3_600_000 // the claim is what meets the 401
	_, wait, log := startRunner(t, g, Config{Token: g.runnerToken})
	g.waitFor("a claim", func() bool { return g.claims > 0 })
	g.update(func() { g.revoked = true })

	err := wait()
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("Run: %v, want ErrUnauthorized", err)
	}
	if !strings.Contains(err.Error(), "revoked or invalid") || !strings.Contains(err.Error(), "invalid runner token") {
		t.Errorf("error %q does not say what happened", err)
	}
	if strings.Contains(log.String(), "secret") {
		t.Errorf("a token is in the runner's log:\n%s", log.String())
	}
}

func TestRunnerWithAnUnknownTokenDoesNotStart(t *testing.T) {
	g := newTestGateway(t)
	_, wait, _ := startRunner(t, g, Config{Token: protocol.RunnerTokenPrefix + "unknown"})
	if err := wait(); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("Run: %v, want ErrUnauthorized", err)
	}
}

func TestNewNamesTheBadSetting(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Token: "oprn_x"}, "gateway URL: required"},
		{Config{GatewayURL: "ftp://host", Token: "oprn_x"}, "gateway URL"},
		{Config{GatewayURL: "http://host"}, "token: required"},
		{Config{GatewayURL: "http://host", Token: "hunter2"}, "token: must start with"},
		{Config{GatewayURL: "http://host", Token: "oprn_x", Concurrency: -1}, "concurrency"},
		{Config{GatewayURL: "http://host", Token: "oprn_x", CancelGrace: -1}, "cancel grace"},
		{Config{GatewayURL: "http://host", Token: "oprn_x", CABundle: "/nonexistent/ca.pem"}, "CA bundle: open /nonexistent/ca.pem"},
		{Config{GatewayURL: "http://host", Token: "oprn_x", CABundle: notPEM}, "CA bundle " + notPEM + ": holds no PEM certificate"},
		{Config{GatewayURL: "http://host", Token: "oprn_x", Deployment: "outpost-runner"}, `deployment "outpost-runner": must be NAMESPACE/NAME`},
		{Config{GatewayURL: "http://host", Token: "oprn_x", Deployment: "ns/a/b"}, `deployment "ns/a/b": must be NAMESPACE/NAME`},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want an error about %q", tc.cfg, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error quotes the token: %v", err)
		}
	}
}

// Helm jobs run in outpost-runner-helm: found next to the runner's binary,
// it makes helm and helm_chart capabilities and runs their jobs; without it
// the runner offers neither; a configured one must exist.
func TestHelmJobBinary(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "outpost-runner")
	helmBin := filepath.Join(dir, HelmJobBinary)
	for _, p := range []string{self, helmBin} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{GatewayURL: "http://127.0.0.1:1", Token: "oprn_x", Executable: self, Logger: slog.New(slog.DiscardHandler)}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{protocol.JobTypeHelm, protocol.JobTypeHelmChart} {
		if !slices.Contains(r.capabilities, typ) || r.cfg.jobExecutables[typ] != helmBin {
			t.Errorf("capabilities %v, job executables %v: want %s, run by %s", r.capabilities, r.cfg.jobExecutables, typ, helmBin)
		}
		if s := r.newSupervisor(protocol.Job{ID: "job_1", Type: typ}, time.Now(), dir, nil); s.exe != helmBin {
			t.Errorf("a %s job runs %s, want %s", typ, s.exe, helmBin)
		}
	}
	for _, typ := range []string{protocol.JobTypeTerraform, protocol.JobTypeOCI} {
		if s := r.newSupervisor(protocol.Job{ID: "job_2", Type: typ}, time.Now(), dir, nil); s.exe != self {
			t.Errorf("a %s job runs %s, want the runner's own binary", typ, s.exe)
		}
	}

	if err := os.Remove(helmBin); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if r, err := New(cfg); err != nil || slices.Contains(r.capabilities, protocol.JobTypeHelm) || slices.Contains(r.capabilities, protocol.JobTypeHelmChart) {
		t.Errorf("without %s: capabilities %v (%v), want neither helm nor helm_chart", HelmJobBinary, r.capabilities, err)
	}
	// A binary configured for helm jobs runs chart builds too.
	other := filepath.Join(dir, "my-helm-jobs")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.Helm.JobBinary = other
	if r, err := New(cfg); err != nil || r.cfg.jobExecutables[protocol.JobTypeHelmChart] != other {
		t.Errorf("helm jobs configured to run in %s: job executables %v (%v), want helm_chart there too", other, r.cfg.jobExecutables, err)
	}
	cfg.Helm.JobBinary = filepath.Join(dir, "missing")
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "helm jobs") {
		t.Errorf("a missing helm job binary: %v, want an error naming helm jobs", err)
	}
}
