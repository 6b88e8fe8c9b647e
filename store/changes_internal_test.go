package store

import (
	"reflect"
	"slices"
	"testing"
)

// Every field of a change type that changed copies (a pointer) names a
// field of its model of the same type or of its pointer's: changed panics
// on one that does not.
func TestChangeTypesFitTheirModels(t *testing.T) {
	for change, model := range map[any]any{StepChange{}: InstallStep{}, ReleaseInstallChange{}: ReleaseInstall{}} {
		ct, mt := reflect.TypeOf(change), reflect.TypeOf(model)
		for i := range ct.NumField() {
			f := ct.Field(i)
			if f.Type.Kind() != reflect.Pointer {
				continue // written by the store itself
			}
			m, ok := mt.FieldByName(f.Name)
			switch {
			case !ok:
				t.Errorf("%s.%s: %s has no such field", ct.Name(), f.Name, mt.Name())
			case f.Type != m.Type && f.Type.Elem() != m.Type:
				t.Errorf("%s.%s is %s, %s's is %s", ct.Name(), f.Name, f.Type, mt.Name(), m.Type)
			}
		}
	}
}

// A change writes the fields it sets, zero values included, and names them.
func TestChangedNamesTheFieldsSet(t *testing.T) {
	var row InstallStep
	empty, zero := "", 0
	got := changed(StepChange{Error: &empty, Remove: &zero, PlanJobID: new("job_1")}, &row)
	slices.Sort(got)
	if want := []string{"Error", "PlanJobID", "Remove"}; !slices.Equal(got, want) {
		t.Errorf("fields %q, want %q", got, want)
	}
	if row.PlanJobID == nil || *row.PlanJobID != "job_1" {
		t.Errorf("row %+v", row)
	}
}
