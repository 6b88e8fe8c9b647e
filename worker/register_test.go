package worker_test

import (
	"reflect"
	"slices"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/outpost-dev/outpost/activities"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/worker"
)

// The worker registers exactly the contract's activities: each name of the
// table, with exactly its declared signature, and nothing the table lacks
// (Temporal registers a struct's exported methods, each under its name).
func TestWorkerRegistersTheContractsActivities(t *testing.T) {
	rec := recorder{}
	worker.RegisterActivities(rec, worker.Config{})
	for name, sig := range contract.Signatures {
		got, ok := rec[name]
		switch {
		case !ok:
			t.Errorf("%s is in the contract, not registered", name)
		case len(got) > 1:
			t.Errorf("%s is registered %d times", name, len(got))
		case got[0] != reflect.TypeOf(sig):
			t.Errorf("%s is registered as %s, the contract says %s", name, got[0], reflect.TypeOf(sig))
		}
	}
	for name := range rec {
		if _, ok := contract.Signatures[name]; !ok {
			t.Errorf("%s is registered, not in the contract", name)
		}
	}
}

// recorder records what is registered as Temporal registers it: each
// exported method of a struct, under its name.
type recorder map[string][]reflect.Type

func (r recorder) RegisterActivity(a any) {
	v := reflect.ValueOf(a)
	for i := range v.NumMethod() {
		name := v.Type().Method(i).Name
		r[name] = append(r[name], v.Method(i).Type())
	}
}

// A real worker takes the registration (Temporal refuses a name registered
// twice, or a method that is not an activity), and classifies every
// activity's error.
func TestWorkerTakesTheRegistration(t *testing.T) {
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	worker.New(worker.Config{Client: c})
	classifier := reflect.TypeOf(activities.Classifier())
	if !slices.ContainsFunc(worker.Options().Interceptors, func(i interceptor.WorkerInterceptor) bool { return reflect.TypeOf(i) == classifier }) {
		t.Errorf("the worker's interceptors %v lack the classifier", worker.Options().Interceptors)
	}
}
