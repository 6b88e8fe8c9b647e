package e2e

import (
	"context"
	"strings"

	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/protocol"
)

// checkManifestsHoldNoCredential: the install's stored job manifests carry
// the placeholders of credentials per attempt, never a state credential, and
// every vendor-registry access in them is a placeholder too.
func (s *stack) checkManifestsHoldNoCredential(inst string) {
	s.t.Helper()
	jobs, err := s.store.ListJobs(context.Background(), s.orgID, inst, 1000)
	if err != nil {
		s.t.Fatal(err)
	}
	key, err := s.store.SigningKey(context.Background(), s.orgID)
	if err != nil {
		s.t.Fatal(err)
	}
	var terraform, registry int
	for _, j := range jobs {
		m := string(j.Manifest)
		if strings.Contains(m, "opst_") {
			s.t.Fatalf("job %s (%s) stores a state credential in its manifest", j.ID, j.Type)
		}
		placeholders := strings.Count(m, `"password":"outpost-attempt-credential:`)
		if j.Type == protocol.JobTypeTerraform && strings.Contains(m, `"password":"`+attemptcred.State(key, s.orgID)+`"`) {
			terraform, placeholders = terraform+1, placeholders-1
		}
		registry += placeholders // the vendor registry's (a module synced from a build)
	}
	if terraform == 0 || registry == 0 {
		s.t.Fatalf("of %d jobs, %d terraform manifests and %d registry accesses hold placeholders; want some of each", len(jobs), terraform, registry)
	}
	s.t.Logf("%d jobs: %d terraform manifests and %d registry accesses hold placeholders, none a credential", len(jobs), terraform, registry)
}
