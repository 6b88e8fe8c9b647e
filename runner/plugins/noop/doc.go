// Package noop is the plugin of the "noop" job type: it prints some lines,
// sleeps, and ends with a chosen exit code and outputs. It does nothing else,
// which makes it the job of choice for tests and benchmarks of the job
// pipeline (queue, gateway, runner, logs).
package noop
