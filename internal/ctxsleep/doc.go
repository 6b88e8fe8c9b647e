// Package ctxsleep holds Sleep, a wait that ends early when its context
// does: the runner's backoffs, the gateway's and the dev server's waits
// and their tests share it. It imports nothing of the project.
package ctxsleep
