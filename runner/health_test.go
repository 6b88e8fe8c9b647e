package runner

import (
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestHealthEndpointAnswersWhileTheRunnerRuns(t *testing.T) {
	g := newTestGateway(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	stop, _, _ := startRunner(t, g, Config{Token: g.runnerToken, HealthAddr: addr})
	url := "http://" + addr + HealthPath

	// Wait for the endpoint (a wait for a state, not a timing assertion).
	var resp *http.Response
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
