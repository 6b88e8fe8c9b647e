package api

import (
	"context"
	"net/http"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// refusedByRunner answers 409 when the install's runner, by its customer's
// policy as it last reported it, will not run work of jobType (a debug
// command's program) or of an operation of opKind. A runner that reported
// no policy yet is given the work: it checks every job itself.
func (s *Server) refusedByRunner(ctx context.Context, inst store.Install, jobType, program, opKind string) error {
	r, err := s.installRunner(ctx, inst)
	if err != nil || r == nil || r.CustomerPolicy == nil {
		return err
	}
	if why := r.CustomerPolicy.Refusal(jobType, program, opKind, r.Consents, s.now()); why != "" {
		return apierr.New(http.StatusConflict, protocol.CodeConflict, "", "%s", why)
	}
	return nil
}

// startedBy names the caller for the customer's record: its API token's name.
func customerPolicyView(p *protocol.CustomerPolicy) *wire.CustomerPolicy {
	if p == nil {
		return nil
	}
	return &wire.CustomerPolicy{JobTypes: nonNil(p.JobTypes), DebugCommands: p.DebugCommands, DebugPrograms: p.DebugPrograms,
		Destroy: p.Destroy, Concurrency: p.Concurrency, Digest: p.Digest}
}

func consentView(c protocol.Consent) wire.Consent { return wire.Consent{Kind: c.Kind, Until: c.Until} }
