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
