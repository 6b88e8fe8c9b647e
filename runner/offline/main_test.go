package offline

import (
	"os"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil/jobproctest"
)

// TestMain lets the test binary be the job process too: a deploy under test
// runs its jobs as "job --dir DIR" of os.Args[0].
func TestMain(m *testing.M) { os.Exit(jobproctest.Main(m)) }
