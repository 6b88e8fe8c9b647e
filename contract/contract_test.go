package contract_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
)

// The contract links the standard library only: what links it (the
// workflows) links nothing of the control plane's implementation through it.
func TestContractImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != "github.com/outpost-dev/outpost/contract" && !strings.HasPrefix(dep, "github.com/outpost-dev/outpost/contract/") {
			t.Errorf("the contract depends on %s", dep)
		}
	}
}

// Every activity name is declared in Signatures (and nothing else is), each
// as an activity's signature: a context first, an error last.
func TestEveryActivityNameHasItsSignature(t *testing.T) {
	names := activityNames(t)
	var keys []string
	for name, sig := range contract.Signatures {
		keys = append(keys, name)
		ft := reflect.TypeOf(sig)
		ctxType, errType := reflect.TypeFor[context.Context](), reflect.TypeFor[error]()
		if ft.Kind() != reflect.Func || ft.NumIn() == 0 || ft.In(0) != ctxType || ft.Out(ft.NumOut()-1) != errType {
			t.Errorf("%s: %s is not func(context.Context, …) (…, error)", name, ft)
		}
		if v := reflect.ValueOf(sig); !v.IsNil() {
			t.Errorf("%s: the table holds a function, not a typed nil", name)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, names) {
		t.Errorf("signatures %q,\nnames %q", keys, names)
	}
}

// activityNames are the constants of activities.go.
func activityNames(t *testing.T) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "activities.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for _, id := range vs.Names {
				names = append(names, id.Name)
			}
		}
		return true
	})
	slices.Sort(names)
	return names
}

// A workflow's call by name is checked against the signature: a count or a
// type that does not fit is an error naming the activity.
func TestCheckArgs(t *testing.T) {
	until := time.Now()
	for _, tc := range []struct {
		name string
		args []any
		want string
	}{
		{contract.SetStepStatus, []any{"op_1", "db", status.StepFailed, "boom"}, ""},
		{contract.SetOperationWaiting, []any{"op_1", (*time.Time)(nil)}, ""},
		{contract.SetOperationWaiting, []any{"op_1", &until}, ""},
		{contract.SetOperationWaiting, []any{"op_1", nil}, ""},
		{contract.SetStepStatus, []any{"op_1", "db", "failed", "boom"}, "activity SetStepStatus: argument 3 is string, not status.Step"},
		{contract.AwaitJob, []any{"job_1"}, "activity AwaitJob takes 2 arguments after its context, not 1"},
		{contract.RetryJob, []any{"job_1", nil}, "activity RetryJob: argument 2 is nil, not int"},
		{"Teleport", nil, `the contract has no activity "Teleport"`},
	} {
		err := contract.CheckArgs(tc.name, tc.args...)
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("CheckArgs(%s, %v) = %q, want %q", tc.name, tc.args, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("CheckArgs(%s, %v) = nil, want %q", tc.name, tc.args, tc.want)
		}
	}
}
