package ociclient

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// A registry replica that dies after reading a request closes the
// connection without an answer: the request is sent again.
func TestTransportRetriesConnectionClosedBeforeAnswer(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			c, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			c.Close()
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/v2/", nil)
	resp, err := transport.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET after a connection closed unanswered: %v (%d calls)", err, calls.Load())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
		t.Fatalf("GET: %d after %d calls, want 200 after 2", resp.StatusCode, calls.Load())
	}
}

// A registry restarting refuses connections for a moment: the request is
// sent again until it is back.
func TestTransportRetriesARegistryThatIsRestarting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // down: connections to addr are refused
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })}
	defer srv.Close()
	go func() {
		time.Sleep(500 * time.Millisecond)
		back, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		_ = srv.Serve(back)
	}()
	req, _ := http.NewRequest("GET", "http://"+addr+"/v2/", nil)
	resp, err := transport.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET while the registry restarts: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d, want 200 once the registry is back", resp.StatusCode)
	}
}

func TestClosedIdleIsRetried(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "http://r/v2/", Err: errors.New("http: server closed idle connection")}
	if ok, _ := retryPolicy.Retryable(nil, err); !ok {
		t.Errorf("%v is not retried", err)
	}
	if ok, _ := retryPolicy.Retryable(nil, errors.New("x509: certificate signed by unknown authority")); ok {
		t.Error("a certificate error is retried")
	}
}
