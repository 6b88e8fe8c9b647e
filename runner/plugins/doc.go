// Package plugins defines the one interface every job type implements, and a
// registry that maps job types to their plugin. Each plugin lives in a folder
// of its own below this one: noop, command (debug commands), terraform (plan,
// apply, plan_apply; a module synced from the install's registry), oci (build
// and sync artifacts), helm (charts; run by outpost-runner-helm, not linked
// into outpost-runner), and toolpath (finding the tools a plugin runs).
//
// A plugin runs inside the per-job process (outpost-runner job, or
// outpost-runner-helm job), never in the runner itself: it may write to the job's stdout and stderr (those are the
// job's logs), block or crash without hurting the runner or any other job.
package plugins
