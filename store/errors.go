package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers map them to HTTP status codes.
var (
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrStaleAttempt = errors.New("stale attempt: the attempt is no longer current")
	ErrUnauthorized = errors.New("invalid or revoked token")
	// ErrJobsBusy: a claim found no job it could lock, but a queued job it
	// may run is locked by another transaction (e.g. one giving it its
	// inputs). Ask again shortly; "no job" would be wrong.
	ErrJobsBusy = errors.New("queued jobs are locked by another transaction")
)

// FieldError is bad input about one field. It unwraps to nothing in
// particular; use errors.As.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Message) }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}
