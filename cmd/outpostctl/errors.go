package main

import (
	"errors"
	"fmt"
)

// Exit codes, documented in the root command's help and docs/architecture/cli.md.
const (
	exitOK          = 0
	exitUsage       = 1   // bad usage or input, a request or config the API refused (400, 413, 415, 422), no context
	exitUnreachable = 2   // the API could not be reached, or failed (5xx)
	exitAuth        = 3   // the API refused the token (401)
	exitNotFound    = 4   // no such app, install, operation (404)
	exitConflict    = 5   // the API answered 409: e.g. an operation already runs on the install
	exitOperation   = 6   // a waited-for operation ended failed, cancelled or denied; a waited-for build failed
	exitDetached    = 130 // Ctrl-C while following an operation: detached, it goes on (as a shell's SIGINT)
)

const exitCodesHelp = `Exit codes:
  0  success
  1  usage or input error, or a request the API refused as invalid (400, 422)
  2  the API could not be reached, or failed (5xx)
  3  the API refused the token (401)
  4  not found (404)
  5  conflict (409), e.g. an operation already runs on the install
  6  a waited-for operation failed, was cancelled or denied (or --timeout ended the wait), or a waited-for build failed
  130  Ctrl-C while following an operation: detached, the operation goes on (outpostctl wait follows it again)
` + "`exec`" + ` exits with the remote command's own exit code (see ` + "`outpostctl exec --help`" + `).`

// exitError is an error with the exit code it ends the process with.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// exitCode is err's exit code; an error of cobra's (an unknown flag or
// command, a wrong argument count) is a usage error.
func exitCode(err error) int {
	if e, ok := errors.AsType[*exitError](err); ok {
		return e.code
	}
	return exitUsage
}
