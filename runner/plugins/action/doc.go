// Package action is the plugin of the "action" job type: one step of a
// vendor's action (protocol.ActionManifest). A step is a script of the app's
// config, written to an executable file in the job's directory (its #! line
// chooses the interpreter; /bin/sh runs one without), or a command line. It
// runs in the job's directory with the job's clean environment, the step's
// Env and OUTPOST_OUTPUTS, the path of the file it may write its outputs to:
// `key=value` lines or one JSON object of strings (outputs.go). Its stdout
// and stderr are the job's logs, with the values of Scrub and of the step's
// sensitive outputs masked; its exit code and outputs are the job's outputs
// (protocol.ActionOutputs).
//
// The step's timeout is the job's: the runner's supervisor stops the job's
// whole process group at TimeoutMS (SIGTERM, then SIGKILL after its grace),
// as it does on a cancel, and the plugin reports how the step took it.
package action
