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
	recv := newWebhookReceiver(t)

	subID := recv.subscribe(s, map[string]any{"name": "ops", "event_types": []string{"operation.failed"}, "app_ids": []string{s.install.AppID}})

	var created struct {
		ID string `json:"id"`
	}
	s.do("POST", "/v1/installs", map[string]any{"app_id": s.install.AppID, "name": "no-runner"}, &created)
	op := s.startOp(created.ID, "/provision", nil)
	if done := s.waitOp(created.ID, op.ID, time.Minute); done.Status != status.OpFailed {
		t.Fatalf("operation %s, want failed", done.Status)
	}
	waitFor(t, time.Minute, "the operation.failed webhook", func() bool { evs, _ := recv.events(); return len(evs) == 1 })
	evs, badSigs := recv.events()
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
		s.do("GET", "/v1/notifications/subscriptions/"+subID+"/deliveries", nil, &list)
		return len(list.Deliveries) == 1 && list.Deliveries[0].State == "delivered"
	})
	if a := list.Deliveries[0].Attempts; len(a) != 1 || a[0].StatusCode != 200 {
		t.Fatalf("attempts %+v, want one answered 200", a)
	}
	if code := s.do("POST", "/v1/notifications/deliveries/"+list.Deliveries[0].ID+"/redeliver", nil, nil); code != http.StatusAccepted {
		t.Fatalf("redeliver: %d", code)
	}
	waitFor(t, time.Minute, "the redelivery", func() bool { evs, _ := recv.events(); return len(evs) == 2 })
	if evs, _ := recv.events(); evs[1].ID != evs[0].ID {
		t.Fatalf("redelivered event %s, want %s", evs[1].ID, evs[0].ID)
	}
}

// webhookReceiver is a webhook endpoint on loopback that checks each
// delivery's signature with the subscription's secret, keeping the good
// ones (with when they arrived) and the bodies of the bad.
type webhookReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	secret   string
	got      []contract.NotificationEvent
	received []time.Time
	bad      []string
}

func newWebhookReceiver(t testing.TB) *webhookReceiver {
	r := &webhookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *webhookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	at := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	mac := hmac.New(sha256.New, []byte(r.secret))
	mac.Write([]byte(req.Header.Get("Outpost-Timestamp") + "." + string(body)))
	if !hmac.Equal([]byte(req.Header.Get("Outpost-Signature")), []byte("v1="+hex.EncodeToString(mac.Sum(nil)))) {
		r.bad = append(r.bad, string(body))
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev contract.NotificationEvent
	_ = json.Unmarshal(body, &ev)
	r.got, r.received = append(r.got, ev), append(r.received, at)
}

func (r *webhookReceiver) setSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = s
}

// events are the deliveries whose signature checked, and the bodies of
// those whose did not.
func (r *webhookReceiver) events() ([]contract.NotificationEvent, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]contract.NotificationEvent(nil), r.got...), append([]string(nil), r.bad...)
}

// subscribe subscribes the receiver through the API (sub: the body without
// channel and URL) and keeps the subscription's secret; it returns its ID.
func (r *webhookReceiver) subscribe(s *stack, sub map[string]any) string {
	s.t.Helper()
	sub["channel"], sub["url"] = "webhook", r.URL
	var created struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if code := s.do("POST", "/v1/notifications/subscriptions", sub, &created); code != http.StatusCreated {
		s.t.Fatalf("create subscription: %d", code)
	}
	r.setSecret(created.Secret)
	return created.ID
}

// arrivals are when each good delivery arrived, in events' order.
func (r *webhookReceiver) arrivals() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.received...)
}
