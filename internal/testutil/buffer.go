package testutil

import "github.com/outpost-dev/outpost/internal/syncio"

// LockedBuffer is a bytes.Buffer that goroutines (a logger, a process's
// output, the test) may share.
type LockedBuffer = syncio.Buffer
