// Package worker wires Outpost's Temporal side: dialling the cluster, the
// worker that runs the workflows and activities on the control task queue,
// and Operations, the client calls the API makes (start, cancel, await a
// workflow). The embedded dev server lives in worker/devserver.
//
// The worker registers each workflow under its contract name (Workflows)
// and the activities by domain (activities.Register: exactly the contract's
// table, register_test.go checks), with activities.Classifier as its
// interceptor, which classifies every activity's error, local ones
// included. Clients start workflows by their contract names.
package worker
