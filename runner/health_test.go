package runner

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil"
)

func TestHealthEndpointAnswersWhileTheRunnerRuns(t *testing.T) {
	g := newTestGateway(t)
	addr := testutil.FreeAddr(t)
	stop, _, _ := startRunner(t, g, Config{Token: g.runnerToken, HealthAddr: addr})
	url := "http://" + addr + HealthPath

	// Wait for the endpoint (a wait for a state, not a timing assertion).
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err = http.Get(url); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	var h Health
	err = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || h.Status != "ok" || h.Version != Version {
		t.Errorf("GET %s: %d %+v %v", url, resp.StatusCode, h, err)
	}
	// Ready: the runner is claiming, so the gateway accepted its token.
	g.waitFor("a claim", func() bool { return g.claims > 0 })
	if code, h := getHealth(t, "http://"+addr+ReadyPath); code != http.StatusOK || h.Status != "ready" || h.Version != Version {
		t.Errorf("GET %s: %d %+v", ReadyPath, code, h)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("the health endpoint still answers after Run returned: %d", resp.StatusCode)
	}
}

func TestHealthAddressIsChecked(t *testing.T) {
	_, err := New(Config{GatewayURL: "http://gw", Token: "oprn_x", HealthAddr: "8081"})
	if err == nil || err.Error() != `runner config: health address "8081": must be host:port or :port: address 8081: missing port in address` {
		t.Errorf("New with health address 8081: %v", err)
	}
}

// A runner that has not reached the gateway is alive but not ready.
func TestNotReadyUntilTheGatewayAcceptedTheRunner(t *testing.T) {
	addr := testutil.FreeAddr(t)
	r, err := New(Config{GatewayURL: "http://127.0.0.1:1", Token: "oprn_x", HealthAddr: addr, WorkDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + HealthPath); err == nil {
			resp.Body.Close()
			break
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	if code, h := getHealth(t, "http://"+addr+ReadyPath); code != http.StatusServiceUnavailable || h.Status != "connecting" {
		t.Errorf("GET %s before the gateway was reached: %d %+v; want 503 connecting", ReadyPath, code, h)
	}
}

// getHealth GETs a probe and decodes its answer.
func getHealth(t *testing.T, url string) (int, Health) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var h Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, h
}
