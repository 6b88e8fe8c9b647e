// Package worker wires Outpost's Temporal side: dialling the cluster, the
// worker that runs the workflows and activities on the control task queue,
// and Operations, the client calls the API makes (start, cancel, await a
// workflow). The embedded dev server lives in worker/devserver.
package worker
