// Package protocol is the runner protocol: the JSON messages and routes that
// the gateway (/runner/v1) and the runner exchange, and the job manifests.
//
// It is the only package the runner binary and the control plane share, so it
// must stay small and import nothing of either side.
package protocol
