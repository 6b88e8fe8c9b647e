package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// A worker's /healthz answers 503, naming nothing but "unavailable", while
// Temporal does not answer (here: nothing listens where it should).
func TestWorkerHealthNeedsTemporal(t *testing.T) {
	tc, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	p := &plane{log: slog.New(slog.DiscardHandler), store: storetest.Open(t, store.Postgres), temporal: tc}
	rec := httptest.NewRecorder()
	p.healthz(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusServiceUnavailable || strings.TrimSpace(string(body)) != `{"status":"unavailable"}` {
		t.Errorf("healthz without Temporal: %d %s, want 503 unavailable", rec.Code, body)
	}
}
