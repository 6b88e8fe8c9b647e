// Package terraformtest finds the terraform binary for tests that run a
// real one, the way the runner finds it (terraform.Find): OUTPOST_TERRAFORM,
// PATH, then the project's .tools directory in the working directory or a
// parent.
package terraformtest
