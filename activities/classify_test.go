package activities_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// Every activity of the contract passes through the worker's classifier,
// run as an activity and as a local one: on a store whose every statement
// fails with store.ErrNotFound (a row that is not there, and will not be on
// a retry), each fails for good, a non-retryable NotFound; on one whose
// every statement fails otherwise (the database away), each is retried.
func TestEveryActivityIsClassified(t *testing.T) {
	s := storetest.Open(t, store.Postgres)
	fail := failStatements(t, s)
	deps := activities.Deps{Store: s, Operations: activities.OperationConfig{GatewayURL: "http://gateway", RegistryAddress: "registry:5000"}}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{activities.Classifier()}})
	activities.Register(env, deps)
	methods := activityMethods(activities.New(deps))
	for name, sig := range contract.Signatures {
		args := zeroArgs(reflect.TypeOf(sig))
		run := map[string]func() error{
			"activity": func() error { _, err := env.ExecuteActivity(name, args...); return err },
			"local":    func() error { _, err := env.ExecuteLocalActivity(methods[name], args...); return err },
		}
		for how, call := range run {
			*fail = fmt.Errorf("the row: %w", store.ErrNotFound)
			if got := class(call()); got != "non-retryable NotFound" {
				t.Errorf("%s as %s, its row not found: %s, want non-retryable NotFound", name, how, got)
			}
			*fail = errors.New("connection refused: the database is restarting")
			if got := class(call()); got != "retryable" {
				t.Errorf("%s as %s, the database away: %s, want retryable", name, how, got)
			}
		}
	}
}

// failStatements makes every statement of s fail with the error it points
// to (none while it is nil).
func failStatements(t *testing.T, s *store.Store) *error {
	fail := new(error)
	hook := func(db *gorm.DB) {
		if *fail != nil {
			_ = db.AddError(*fail)
		}
	}
	if err := storetest.OnEveryStatement(s.DB(), "test:fail", false, hook); err != nil {
		t.Fatal(err)
	}
	return fail
}

// activityMethods are the activities' methods by name, as the worker
// registers them.
func activityMethods(domains []any) map[string]any {
	out := map[string]any{}
	for _, d := range domains {
		v := reflect.ValueOf(d)
		for i := range v.NumMethod() {
			out[v.Type().Method(i).Name] = v.Method(i).Interface()
		}
	}
	return out
}

// zeroArgs are zero values of what an activity of type fn takes after its
// context.
func zeroArgs(fn reflect.Type) []any {
	var args []any
	for i := 1; i < fn.NumIn(); i++ {
		args = append(args, reflect.Zero(fn.In(i)).Interface())
	}
	return args
}

// class is how Temporal sees an activity's error: a non-retryable one of a
// type, or one it retries.
func class(err error) string {
	var app *temporal.ApplicationError
	switch {
	case err == nil:
		return "nil"
	case errors.As(err, &app) && app.NonRetryable():
		return "non-retryable " + app.Type()
	}
	return "retryable"
}

// The database stopped and started again: meanwhile an activity is retried,
// and once it is back the activity succeeds, on the store it had.
func TestActivitiesRideOutADatabaseRestart(t *testing.T) {
	pg := storetest.StartServer(t)
	s := storetest.OpenPostgres(t, pg.AdminURL())
	inst := storetest.NewTenant(t, s).Install
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{activities.Classifier()}})
	activities.Register(env, activities.Deps{Store: s})
	job := contract.EnqueueJobInput{Key: "k1", InstallID: inst.ID, Type: protocol.JobTypeNoop, Manifest: json.RawMessage(`{}`)}
	enqueue := func() (contract.JobRef, error) {
		var ref contract.JobRef
		v, err := env.ExecuteActivity(contract.EnqueueJob, job)
		if err == nil {
			err = v.Get(&ref)
		}
		return ref, err
	}

	pg.Stop()
	if _, err := enqueue(); class(err) != "retryable" {
		t.Errorf("the database stopped: %s (%v), want retryable", class(err), err)
	}
	pg.Start()
	// Connections the stop cut may fail a first call or two (retryable, as
	// Temporal would retry them); the activity succeeds soon after.
	var ref contract.JobRef
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if ref, err = enqueue(); err == nil || time.Now().After(deadline) {
			break
		}
		if class(err) != "retryable" {
			t.Fatalf("the database back, a cut connection: %s (%v), want retryable", class(err), err)
		}
	}
	if err != nil || !ref.Created {
		t.Fatalf("the database back: %+v, %v; want a new job", ref, err)
	}
	if again, err := enqueue(); err != nil || again.Created || again.JobID != ref.JobID {
		t.Errorf("enqueue again: %+v, %v; want the same job %s", again, err, ref.JobID)
	}
}
