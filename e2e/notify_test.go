package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// A provision that fails (its runner never comes) sends a signed
// operation.failed webhook to a receiver on loopback, subscribed through
// the API; a redelivery through the API sends the same event again.
func TestFailedProvisionNotifiesAWebhook(t *testing.T) {
	s := newStack(t, stackOptions{runnerTimeout: 3 * time.Second})
	s.syncConfig("testdata/failing-app")
	var (
		mu     sync.Mutex
		secret string
		got    []contract.NotificationEvent
		bad    []string
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(r.Header.Get("Outpost-Timestamp") + "." + string(body)))
		if !hmac.Equal([]byte(r.Header.Get("Outpost-Signature")), []byte("v1="+hex.EncodeToString(mac.Sum(nil)))) {
			bad = append(bad, string(body))
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev contract.NotificationEvent
		_ = json.Unmarshal(body, &ev)
		got = append(got, ev)
	}))
	t.Cleanup(recv.Close)
	events := func() ([]contract.NotificationEvent, []string) {
		mu.Lock()
		defer mu.Unlock()
		return append([]contract.NotificationEvent(nil), got...), append([]string(nil), bad...)
	}

	var sub struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if code := s.do("POST", "/v1/notifications/subscriptions", map[string]any{"name": "ops", "event_types": []string{"operation.failed"},
		"channel": "webhook", "url": recv.URL, "app_ids": []string{s.install.AppID}}, &sub); code != http.StatusCreated {
		t.Fatalf("create subscription: %d", code)
	}
	mu.Lock()
	secret = sub.Secret
	mu.Unlock()

	var created struct {
		ID string `json:"id"`
	}
	s.do("POST", "/v1/installs", map[string]any{"app_id": s.install.AppID, "name": "no-runner"}, &created)
	op := s.startOp(created.ID, "/provision", nil)
	if done := s.waitOp(created.ID, op.ID, time.Minute); done.Status != status.OpFailed {
		t.Fatalf("operation %s, want failed", done.Status)
	}
	waitFor(t, time.Minute, "the operation.failed webhook", func() bool { evs, _ := events(); return len(evs) == 1 })
	evs, badSigs := events()
	if ev := evs[0]; ev.Type != contract.EventOperationFailed || ev.OperationID != op.ID || ev.InstallID != created.ID || len(badSigs) > 0 {
		t.Fatalf("received %+v (bad signatures: %q)", ev, badSigs)
	}

	var list struct {
		Deliveries []struct {
			ID       string `json:"id"`
			State    string `json:"state"`
			Attempts []struct {
				StatusCode int `json:"status_code"`
			} `json:"attempts"`
		} `json:"deliveries"`
	}
	waitFor(t, time.Minute, "the delivery recorded delivered", func() bool {
		s.do("GET", "/v1/notifications/subscriptions/"+sub.ID+"/deliveries", nil, &list)
		return len(list.Deliveries) == 1 && list.Deliveries[0].State == "delivered"
	})
	if a := list.Deliveries[0].Attempts; len(a) != 1 || a[0].StatusCode != 200 {
		t.Fatalf("attempts %+v, want one answered 200", a)
	}
	if code := s.do("POST", "/v1/notifications/deliveries/"+list.Deliveries[0].ID+"/redeliver", nil, nil); code != http.StatusAccepted {
		t.Fatalf("redeliver: %d", code)
	}
	waitFor(t, time.Minute, "the redelivery", func() bool { evs, _ := events(); return len(evs) == 2 })
	if evs, _ := events(); evs[1].ID != evs[0].ID {
		t.Fatalf("redelivered event %s, want %s", evs[1].ID, evs[0].ID)
	}
}
