package workflows

import (
	"reflect"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/outpost-dev/outpost/contract"
)

// registerActivities registers on env every activity of the contract, as a
// stub of its declared signature: a test mocks those its workflow calls
// (env.OnActivity(contract.X, …)); a call of one it did not mock fails,
// naming it. The workflows' tests link no activity.
func registerActivities(env *testsuite.TestWorkflowEnvironment) {
	for name, sig := range contract.Signatures {
		t := reflect.TypeOf(sig)
		stub := reflect.MakeFunc(t, func([]reflect.Value) []reflect.Value {
			out := make([]reflect.Value, t.NumOut())
			for i := range out {
				out[i] = reflect.Zero(t.Out(i))
			}
			var err error = temporal.NewNonRetryableApplicationError("activity "+name+" is not mocked", "NotMocked", nil)
			out[len(out)-1] = reflect.ValueOf(&err).Elem()
			return out
		})
		env.RegisterActivityWithOptions(stub.Interface(), activity.RegisterOptions{Name: name})
	}
}
