package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/store"
)

// Classifier is the worker interceptor that classifies every activity's
// error, regular or local (the SDK runs a worker's interceptors around
// both): see classify.
func Classifier() interceptor.WorkerInterceptor { return &classifier{} }

type classifier struct {
	interceptor.WorkerInterceptorBase
}

func (*classifier) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &classified{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

type classified struct {
	interceptor.ActivityInboundInterceptorBase
}

func (c *classified) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	out, err := c.Next.ExecuteActivity(ctx, in)
	return out, classify(err)
}

// classify is the error an activity returns to Temporal, which looks only
// at the error's own type: a row that is not there (store.ErrNotFound) will
// not appear on a retry, so it fails for good ("NotFound"), as bad input
// does ("InvalidInput": a field the store refused, a config's problems); an
// ApplicationError an activity raised keeps its class, also when wrapped
// (it is returned itself); anything else (the database restarting, a
// connection cut, a timeout) is retried under the workflow's retry policy.
func classify(err error) error {
	var (
		app      *temporal.ApplicationError
		field    *store.FieldError
		problems appconfig.Problems
	)
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
	case errors.As(err, &field), errors.As(err, &problems):
		return temporal.NewNonRetryableApplicationError(err.Error(), "InvalidInput", err)
	}
	return err
}

// nonRetryable marks input problems (a missing input, a template that
// cannot render) that no retry will fix.
func nonRetryable(what string, err error) error {
	var ps appconfig.Problems
	if errors.As(err, &ps) {
		return temporal.NewNonRetryableApplicationError(what+": "+err.Error(), "InvalidInput", err)
	}
	return temporal.NewNonRetryableApplicationError(what+": "+err.Error(), "RenderFailed", err)
}

// manifestError classifies an error of package jobmanifest: none is fixed
// by a retry.
func manifestError(err error) error {
	var e *jobmanifest.Error
	switch {
	case !errors.As(err, &e):
		return err
	case e.Kind == jobmanifest.KindRender && e.Step == "inputs":
		return nonRetryable("render", e.Err)
	case e.Kind == jobmanifest.KindRender:
		return nonRetryable("render "+e.Step, e.Err)
	}
	return temporal.NewNonRetryableApplicationError(e.Error(), e.Kind, nil)
}

// invalidConfig marks an app config version that cannot be run (it does
// not parse, its graph has a cycle): it will not change on a retry.
func invalidConfig(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), "InvalidConfig", err)
}
