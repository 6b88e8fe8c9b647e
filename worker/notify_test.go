package worker_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
	"github.com/outpost-dev/outpost/worker"
	"github.com/outpost-dev/outpost/worker/devserver"
	"github.com/outpost-dev/outpost/worker/devserver/devservertest"
)

// receiver is a webhook receiver on loopback: it checks each request's
// signature with the subscription's secret as docs/notifications.md says,
// answers the first fail requests 500, and keeps the events it accepted.
type receiver struct {
	*httptest.Server
	t      *testing.T
	mu     sync.Mutex
	secret string
	fail   int
	hang   bool
	tries  int
	bad    []string
	events []contract.NotificationEvent
}

func newReceiver(t *testing.T, fail int, hang bool) *receiver {
	r := &receiver{t: t, fail: fail, hang: hang}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tries++
	if r.hang {
		r.mu.Unlock()
		<-req.Context().Done()
		r.mu.Lock()
		return
	}
	ts := req.Header.Get("Outpost-Timestamp")
	mac := hmac.New(sha256.New, []byte(r.secret))
	mac.Write([]byte(ts + "." + string(body)))
	want := "v1=" + hex.EncodeToString(mac.Sum(nil))
	if sec, err := strconv.ParseInt(ts, 10, 64); err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		r.bad = append(r.bad, "timestamp "+ts)
	}
	if !hmac.Equal([]byte(req.Header.Get("Outpost-Signature")), []byte(want)) {
		r.bad = append(r.bad, "signature "+req.Header.Get("Outpost-Signature"))
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if r.tries <= r.fail {
		http.Error(w, "not now", http.StatusInternalServerError)
		return
	}
	var ev contract.NotificationEvent
	if err := json.Unmarshal(body, &ev); err != nil || req.Header.Get("Outpost-Event") != ev.Type || req.Header.Get("Outpost-Delivery") == "" {
		r.bad = append(r.bad, "body "+string(body))
	}
	r.events = append(r.events, ev)
}

func (r *receiver) seen() (tries int, bad []string, events []contract.NotificationEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tries, append([]string(nil), r.bad...), append([]contract.NotificationEvent(nil), r.events...)
}

// waitDelivery returns the delivery once it is no longer pending.
func waitDelivery(t *testing.T, s *store.Store, orgID, id string, within time.Duration) store.NotificationDelivery {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(200 * time.Millisecond) {
		d, err := s.GetDelivery(context.Background(), orgID, id)
		if err == nil && d.State != store.DeliveryPending {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s still pending after %s (%+v, %v)", id, within, d, err)
		}
	}
}

func subscribe(t *testing.T, s *store.Store, sub store.NotificationSubscription) store.NotificationSubscription {
	t.Helper()
	sub.Channel, sub.Enabled = "webhook", true
	out, err := s.CreateSubscription(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An operation that fails, on a real Temporal server, worker and
// PostgreSQL: the subscription that matches it gets a signed
// operation.failed webhook, after its receiver failed twice, with all three
// tries recorded; subscriptions filtered to another app or to labels the
// install lacks get nothing.
func TestFailedOperationIsDeliveredSignedAfterRetries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server and waits out 15s of backoff")
	}
	ctx := context.Background()
	cfg, s, tn := notifyPlane(t)

	recv, other := newReceiver(t, 2, false), newReceiver(t, 0, false)
	sub := subscribe(t, s, store.NotificationSubscription{OrgID: tn.Org.ID, Name: "ops", URL: recv.URL,
		EventTypes: []string{contract.EventOperationFailed}, AppIDs: []string{tn.App.ID}})
	recv.secret = sub.Secret
	subscribe(t, s, store.NotificationSubscription{OrgID: tn.Org.ID, Name: "other app", URL: other.URL,
		EventTypes: []string{contract.EventOperationFailed}, AppIDs: []string{"app_other"}})
	subscribe(t, s, store.NotificationSubscription{OrgID: tn.Org.ID, Name: "gold only", URL: other.URL,
		EventTypes: []string{contract.EventOperationFailed}, LabelSelector: "tier=gold"})

	op, err := s.StartOperation(ctx, store.InstallOperation{OrgID: tn.Org.ID, InstallID: tn.Install.ID, Kind: contract.OpProvision,
		WorkflowID: contract.OperationWorkflowID(tn.Install.ID, contract.OpProvision, ""), ApprovalMode: status.ApproveAll})
	if err != nil {
		t.Fatal(err)
	}
	finishOperation(t, cfg, op.ID)

	d := waitDelivery(t, s, tn.Org.ID, store.DeliveryID(eventIDOf(t, recv, s, tn.Org.ID, sub.ID), sub.ID), 2*time.Minute)
	tries, bad, events := recv.seen()
	if d.State != store.DeliveryDelivered || tries != 3 || len(bad) > 0 || len(events) != 1 {
		t.Fatalf("delivery %s after %d tries (bad: %q), events %+v", d.State, tries, bad, events)
	}
	var codes []int
	for _, a := range d.Attempts {
		codes = append(codes, a.StatusCode)
	}
	if len(codes) != 3 || codes[0] != 500 || codes[1] != 500 || codes[2] != 200 {
		t.Fatalf("recorded attempts %v, want [500 500 200]", codes)
	}
	ev := events[0]
	if ev.Type != contract.EventOperationFailed || ev.OperationID != op.ID || ev.InstallID != tn.Install.ID || ev.AppID != tn.App.ID ||
		ev.OrgID != tn.Org.ID || ev.Summary != "Install customer-1: provision failed" ||
		ev.Links["operation"] != "https://outpost.example/ui/#/installs/"+tn.Install.ID+"/operations/"+op.ID {
		t.Fatalf("event %+v", ev)
	}
	if n, _, _ := other.seen(); n != 0 {
		t.Fatalf("the filtered-out subscriptions got %d requests", n)
	}
}

// notifyPlane starts a Temporal server and a worker on it that delivers
// notifications, on PostgreSQL with an org, app and install.
func notifyPlane(t *testing.T) (worker.Config, *store.Store, storetest.Tenant) {
	t.Helper()
	c := devservertest.Client(t, devserver.Options{UIPort: -1})
	s, tn := storetest.PostgresTenant(t)
	cfg := worker.Config{Client: c, Store: s, TaskQueue: "notify-test", Notify: activities.NotifyConfig{DashboardURL: "https://outpost.example/"}}
	w := worker.New(cfg)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return cfg, s, tn
}

// finishOperation runs the FinishOperation activity as the operation's
// workflow does, with the worker's notifications.
func finishOperation(t *testing.T, cfg worker.Config, opID string) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	worker.RegisterActivities(env, cfg)
	if _, err := env.ExecuteActivity(contract.FinishOperation, opID, status.OpFailed, "boom", activities.FailedInstallStatus(contract.OpProvision)); err != nil {
		t.Fatal(err)
	}
}

// eventIDOf is the event ID of the subscription's one delivery.
func eventIDOf(t *testing.T, _ *receiver, s *store.Store, orgID, subID string) string {
	t.Helper()
	ds, err := s.ListDeliveries(context.Background(), orgID, subID, 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries of %s: %d (%v), want 1", subID, len(ds), err)
	}
	return ds[0].EventID
}

// A receiver that never answers: each try times out, and after the retry
// policy's tries (backoff skipped by the test environment's clock) the
// delivery is failed, every try recorded with its error.
func TestUnansweredDeliveryFailsAfterItsAttempts(t *testing.T) {
	s, tn := storetest.PostgresTenant(t)
	recv := newReceiver(t, 0, true)
	sub := subscribe(t, s, store.NotificationSubscription{OrgID: tn.Org.ID, Name: "slow", URL: recv.URL,
		EventTypes: []string{contract.EventOperationFailed}})
	id := store.DeliveryID("evt_1", sub.ID)
	if _, err := s.CreateDelivery(context.Background(), store.NotificationDelivery{ID: id, OrgID: tn.Org.ID, SubscriptionID: sub.ID,
		EventID: "evt_1", EventType: contract.EventOperationFailed, Payload: `{"id":"evt_1"}`}); err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.SetWorkerOptions(sdkworker.Options{DeadlockDetectionTimeout: time.Minute}) // a loaded machine's slow tasks
	worker.RegisterWorkflows(env)
	worker.RegisterActivities(env, worker.Config{Store: s, Notify: activities.NotifyConfig{PostTimeout: 300 * time.Millisecond}})
	env.ExecuteWorkflow(contract.WorkflowDeliverNotification, contract.DeliveryInput{OrgID: tn.Org.ID, DeliveryID: id})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() == nil {
		t.Fatalf("the delivery's workflow: completed %v, error %v; want failed", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	d, err := s.GetDelivery(context.Background(), tn.Org.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	want := int(contract.DeliveryRetry.Attempts)
	tries, _, _ := recv.seen()
	if d.State != store.DeliveryFailed || len(d.Attempts) != want || tries != want {
		t.Fatalf("delivery %s with %d attempts recorded, %d received; want failed after %d (workflow: %v)", d.State, len(d.Attempts), tries, want, env.GetWorkflowError())
	}
	for _, a := range d.Attempts {
		if a.StatusCode != 0 || !strings.Contains(a.Error, "Timeout") || strings.Contains(a.Error, recv.URL) {
			t.Fatalf("attempt %d: %d %q, want a timeout", a.Attempt, a.StatusCode, a.Error)
		}
	}
}
