package store

import (
	"fmt"
	"reflect"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// StepChange is a change to an operation's step (UpdateStep): each field
// that is set is written, zero values included; the others are left as
// they are. A field is named as the model's (InstallStep), so a misspelt
// column does not compile.
type StepChange struct {
	Status       *status.Step
	Error        *string
	StartedAt    *time.Time
	FinishedAt   *time.Time
	BuildID      *string
	SyncJobID    *string
	PlanJobID    *string
	ApplyJobID   *string
	HasChanges   *bool
	Add          *int
	Change       *int
	Remove       *int // destroy_count
	PlanText     *string
	Policies     *[]protocol.PolicyResult
	RenderDigest *string
	LeftBehind   *[]string
}

// ReleaseInstallChange is a change to one install of a release
// (UpdateReleaseInstall), as StepChange is to a step; Status is always
// written, and with it WaitingUntil: the time an install waiting for its
// maintenance window waits until, none for any other status.
type ReleaseInstallChange struct {
	Status      status.ReleaseInstall
	Error       *string
	FromVersion *int
	OperationID *string
	// RollbackOperationID: the operation a health gate's rollback ran.
	RollbackOperationID *string
	WaitingUntil        time.Time
}

// changed copies the fields change sets (its non-nil pointers) into the
// fields of row (a model) of the same name, and names them: the columns an
// update writes. changes_test.go checks that every change type fits its
// model.
func changed(change, row any) []string {
	cv, rv := reflect.ValueOf(change), reflect.ValueOf(row).Elem()
	var names []string
	for i := range cv.NumField() {
		f := cv.Field(i)
		if f.Kind() != reflect.Pointer || f.IsNil() {
			continue
		}
		name := cv.Type().Field(i).Name
		dst := rv.FieldByName(name)
		if dst.Type() == f.Type() {
			dst.Set(f) // a nullable column
		} else {
			dst.Set(f.Elem())
		}
		names = append(names, name)
	}
	return names
}

// update writes the fields of row named by fields (the model's Go field
// names or columns) to the rows q matches, zero values included. A name the
// model does not have is an error, not a silent no-op.
func update[M any](q *gorm.DB, row *M, fields ...string) *gorm.DB {
	q = q.Model(row)
	if err := q.Statement.Parse(row); err != nil {
		_ = q.AddError(err)
		return q
	}
	for _, f := range fields {
		if q.Statement.Schema.LookUpField(f) == nil {
			_ = q.AddError(fmt.Errorf("store: %T has no field %q", row, f))
			return q
		}
	}
	if len(fields) == 0 {
		return q
	}
	return q.Select(fields).Updates(row)
}
