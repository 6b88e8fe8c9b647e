// Package notify wakes waiters when something they wait for has changed: a
// runner's long poll when a job is queued for it, a RunJob await when its job
// finishes, a log follower when lines arrive, a build's await when it ends.
//
// A notification carries only a topic ("runner:<id>", "job:<id>",
// "job-logs:<id>", "build:<id>", "runner-tokens"); the waiter then reads the
// store. Notifications may be coalesced, and after a lost
// connection every waiter is woken (Bus.Reset), so a waiter must treat a wake
// as "look again", never as data.
//
// Two implementations: Local, in-process channels for the embedded SQLite
// mode; Postgres, LISTEN/NOTIFY on one dedicated connection per process, so
// several API, gateway and worker processes wake each other.
package notify
