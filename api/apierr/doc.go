// Package apierr is how both HTTP surfaces (the control API and the runner
// gateway) read requests and answer errors: strict JSON decoding that names
// the offending field, and one mapping from store errors to status codes with
// a protocol.Error body.
package apierr
