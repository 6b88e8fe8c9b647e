package ociclient

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
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
