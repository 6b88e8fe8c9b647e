// Package devserver runs a complete Temporal server (frontend, history,
// matching and worker services) inside the current process, backed by
// SQLite, optionally together with the Temporal web UI.
//
// It exists for Outpost's embedded dev mode (`outpost dev`), for a Temporal
// server in a process of its own (`outpost temporal`), and for tests that
// need a real Temporal server: nothing is downloaded or spawned at run
// time, everything is compiled in from go.temporal.io/server and
// github.com/temporalio/ui-server/v2.
//
// State lives in DataDir/temporal.sqlite, so namespaces and workflow
// histories survive a restart on the same DataDir (subject to the namespace's
// 24h retention); an empty DataDir keeps everything in memory.
//
// This is one of only two packages allowed to link the Temporal server, which
// is large; import it only from cmd/outpost (dev, temporal) and tests.
//
// # Logging
//
// The server logs through slog (serverLogger). Unlike the server's default
// zap logger, Fatal and Panic only log at error level: a dev server must never
// exit or crash the host process. Once Stop begins, every record is demoted to
// debug: shutting down makes the server log a burst of warnings and errors
// about cancelled polls and refused connections, and some of its internal SDK
// workers are never stopped upstream and keep retrying the closed frontend.
//
// # Process-wide state and leaks
//
// Start may be called again after Stop in the same process (tests do
// start/stop/start), and several Servers may run at once on different
// DataDirs and ports. Temporal itself is not fully stoppable, though:
//
//   - Its SQLite plugin keeps a process-global pool of database handles and
//     never closes them. With a DataDir the file stays open after Stop until
//     the process exits, and a later Start on the same DataDir reuses that
//     handle (so deleting DataDir and starting again on the same path in the
//     same process is not supported). An in-memory database gets a fresh name
//     per Start and its memory is only freed at process exit. (So the schema
//     is created through a database/sql handle of its own, not
//     sqliteschema.SetupSchema, lest the temporary file stay open.)
//   - The worker service never stops its scanner and parent-close-policy SDK
//     workers, so about a hundred goroutines (~10 MB) per Start/Stop cycle
//     stay behind, occasionally retrying the closed frontend port. Their logs
//     are demoted to debug once Stop begins. Because they retry the old port,
//     restarting in the same process on a fixed FrontendPort may let them
//     reconnect to the new server; the default (FrontendPort 0) avoids that.
//   - The web UI keeps one idle gRPC client connection per Start.
//
// None of this matters for `outpost dev` or `outpost temporal`, which start
// one server per process.
package devserver
