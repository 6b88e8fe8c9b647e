// Package jobmanifest builds a job's manifest from an app config version and
// what its templates read (appconfig.Data): the pure part of rendering, shared
// by the control plane's activities and the runner's offline deploy
// (runner/offline), so that both render a step the same way. It links no part
// of the control plane (no store, Temporal or HTTP server).
package jobmanifest
