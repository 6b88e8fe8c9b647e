//go:build !unix

package terraform

import (
	"context"
	"errors"
)

// flock: without file locks the init cache is not used (see initCache).
func flock(context.Context, string) (func(), error) { return nil, errors.ErrUnsupported }
