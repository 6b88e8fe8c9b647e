// Package errscrub gives an error a scrubbed message while errors.Is and
// errors.As still see the original: the runner's registry client and its
// plugins' secrets share it. It imports nothing of the project.
package errscrub
