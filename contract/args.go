package contract

import (
	"fmt"
	"reflect"
)

// CheckArgs says whether args fit what activity name takes after its
// context, as a workflow passes them (Temporal checks a call by function,
// not one by name): an unknown name, a count or a type that does not fit is
// an error that names it.
func CheckArgs(name string, args ...any) error {
	sig, ok := Signatures[name]
	if !ok {
		return fmt.Errorf("the contract has no activity %q", name)
	}
	t := reflect.TypeOf(sig)
	if t.NumIn()-1 != len(args) {
		return fmt.Errorf("activity %s takes %d arguments after its context, not %d", name, t.NumIn()-1, len(args))
	}
	for i, a := range args {
		want := t.In(i + 1)
		if a == nil {
			if nillable(want) {
				continue
			}
			return fmt.Errorf("activity %s: argument %d is nil, not %s", name, i+1, want)
		}
		if got := reflect.TypeOf(a); !got.AssignableTo(want) {
			return fmt.Errorf("activity %s: argument %d is %s, not %s", name, i+1, got, want)
		}
	}
	return nil
}

func nillable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return true
	}
	return false
}
