package wire

import "github.com/outpost-dev/outpost/protocol"

// The offline deploy's files (docs/bundles.md, "Offline deploy"), as the API
// answers and takes them: the very documents the runner reads and writes,
// so the protocol's types (their comments are the schemas' descriptions).

// OfflineInstall is what an air-gapped runner's offline deploy needs of an
// install beyond the bundle.
type OfflineInstall = protocol.OfflineInstall

// OfflineResult is what an offline deploy did, to import.
type OfflineResult = protocol.OfflineResult

// OfflineStep is one step of an offline deploy, in the order it ran.
type OfflineStep = protocol.OfflineStep
