package activities

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/store"
)

// classify is the error an activity returns to Temporal, which looks only at the error's own
// type: a wrapped ApplicationError is returned itself (see the package doc for the classes).
func classify(err error) error {
	var app *temporal.ApplicationError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &app):
		if !app.NonRetryable() {
			return err
		}
		return app // unwrapped: Temporal would see the wrapper's type only
	case errors.Is(err, store.ErrNotFound):
		return temporal.NewNonRetryableApplicationError(err.Error(), "NotFound", err)
	}
	return err
}

// classified is classify on an activity's named error result, deferred:
// `defer classified(&err)`.
func classified(err *error) { *err = classify(*err) }

// nonRetryable marks input problems (a missing input, a template that
// cannot render) that no retry will fix.
func nonRetryable(what string, err error) error {
	var ps appconfig.Problems
	if errors.As(err, &ps) {
		return temporal.NewNonRetryableApplicationError(what+": "+err.Error(), "InvalidInput", err)
	}
	return temporal.NewNonRetryableApplicationError(what+": "+err.Error(), "RenderFailed", err)
}

// invalidConfig marks an app config version that cannot be run (it does
// not parse, its graph has a cycle): it will not change on a retry.
func invalidConfig(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), "InvalidConfig", err)
}
