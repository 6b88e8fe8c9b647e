package activities

import (
	"context"
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/store"
)

// Temporal reads only an error's own type: a classified error keeps its
// class when wrapped; bad input fails for good.
func TestClassifyKeepsWrappedClasses(t *testing.T) {
	for _, tc := range []struct {
		err          error
		nonRetryable bool
		typ, message string
	}{
		{fmt.Errorf("build b1: %w", store.ErrNotFound), true, "NotFound", "build b1: not found"},
		{fmt.Errorf("render: %w", temporal.NewNonRetryableApplicationError("no input x", "InvalidInput", nil)), true, "InvalidInput", "no input x"},
		{fmt.Errorf("get step: %w", context.DeadlineExceeded), false, "", ""},
		{fmt.Errorf("start operation: %w", &store.FieldError{Field: "kind", Message: "is required"}), true, "InvalidInput", "start operation: kind: is required"},
		{fmt.Errorf("config: %w", appconfig.Problems{{File: "app.toml", Message: "no sandbox"}}), true, "InvalidInput", ""},
	} {
		got := classify(tc.err)
		app, ok := got.(*temporal.ApplicationError)
		switch {
		case tc.nonRetryable && (!ok || !app.NonRetryable() || app.Type() != tc.typ || tc.message != "" && app.Message() != tc.message):
			t.Errorf("classify(%v) = %#v, want a non-retryable %s saying %q", tc.err, got, tc.typ, tc.message)
		case !tc.nonRetryable && got != tc.err:
			t.Errorf("classify(%v) = %#v, want it as it is (retryable)", tc.err, got)
		}
	}
}
