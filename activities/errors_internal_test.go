package activities

import (
	"context"
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/store"
)

// Temporal reads only an error's own type: a classified error keeps its
// class when wrapped.
func TestClassifyKeepsWrappedClasses(t *testing.T) {
	for _, tc := range []struct {
		err          error
		nonRetryable bool
		typ, message string
	}{
		{fmt.Errorf("build b1: %w", store.ErrNotFound), true, "NotFound", "build b1: not found"},
		{fmt.Errorf("render: %w", temporal.NewNonRetryableApplicationError("no input x", "InvalidInput", nil)), true, "InvalidInput", "no input x"},
		{fmt.Errorf("get step: %w", context.DeadlineExceeded), false, "", ""},
	} {
		got := classify(tc.err)
		app, ok := got.(*temporal.ApplicationError)
		switch {
		case tc.nonRetryable && (!ok || !app.NonRetryable() || app.Type() != tc.typ || app.Message() != tc.message):
			t.Errorf("classify(%v) = %#v, want a non-retryable %s saying %q", tc.err, got, tc.typ, tc.message)
		case !tc.nonRetryable && got != tc.err:
			t.Errorf("classify(%v) = %#v, want it as it is (retryable)", tc.err, got)
		}
	}
}
