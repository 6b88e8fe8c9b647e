// Package offline is `outpost-runner offline deploy`: a signed release bundle
// deployed to an install with no network at all (docs/bundles.md, "Offline
// deploy"). It verifies the bundle, renders each step's manifest as the
// control plane would (package jobmanifest), loads the bundle's artifacts into
// the install's registry, runs each job as the runner does (runner.LocalJob:
// a process of its own, the same plugins and plan policies: a terraform
// plan_apply per module, a helm deploy per chart; an image's deploy is its
// copy into the install's registry, as connected) and the app's lifecycle
// hooks where the connected provision runs them (plan.go, hook.go: an
// action job per step), keeps terraform
// state in a directory behind a loopback http backend (state.go), and writes
// a protocol.OfflineResult.
//
// It links appconfig (and with it BuildKit), which outpost-runner must not
// (its dependency fence): outpost-runner-helm runs it, and
// `outpost-runner offline deploy` execs that binary.
package offline
