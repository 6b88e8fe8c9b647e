// Package metrics is what every Outpost process shares to serve Prometheus
// metrics: a registry of its own (never the global default) with the Go
// runtime's and the process's collectors, and the handler of GET /metrics.
// It links only the Prometheus client, so the runner may use it.
package metrics
