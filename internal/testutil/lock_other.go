//go:build !unix

package testutil

import "errors"

// lockFile: without file locks, binaries are not kept between runs.
func lockFile(string) (func(), error) { return nil, errors.ErrUnsupported }
