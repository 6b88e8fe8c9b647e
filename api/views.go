package api

import (
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
)

// Every answer is a wire type (package wire); the converters from the
// store's models sit beside the handlers that answer them, one per type.

// views converts each of a list's items with view; an empty list is [],
// never null.
func views[T, W any](items []T, view func(T) W) []W {
	out := make([]W, len(items))
	for i, it := range items {
		out[i] = view(it)
	}
	return out
}

// nonNil is s, or an empty slice for nil: a list in an answer is [], never
// null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// The document's Error is what apierr answers: the same fields, in the same
// order (a conversion compiles only then).
var _ = wire.Error(protocol.Error{})
