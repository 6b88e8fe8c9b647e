// Package plugins defines the one interface every job type implements, and a
// registry that maps job types to their plugin. Each plugin lives in a folder
// of its own below this one (noop, command; later terraform, helm, oci).
//
// A plugin runs inside the per-job process (outpost-runner job), never in the
// runner itself: it may write to the job's stdout and stderr (those are the
// job's logs), block or crash without hurting the runner or any other job.
package plugins
