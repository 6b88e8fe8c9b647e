package customer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// Policy is the customer's policy of a runner (protocol.CustomerPolicy).
type Policy struct {
	// JobTypes limits the job types the runner runs; empty: every type it can run.
	JobTypes []string
	// DebugCommands allows debug commands (off by default); DebugPrograms,
	// when set, are the programs they may start (by name or path).
	DebugCommands bool
	DebugPrograms []string
	// Actions, when set, are the only actions the runner runs (by name).
	Actions []string
	// Destroy: protocol.DestroyAllow (default), DestroyConsent or DestroyDeny.
	Destroy     string
	Concurrency int
}

// Check checks the policy's settings; its errors name the flag.
func (p Policy) Check() error {
	switch p.Destroy {
	case "", protocol.DestroyAllow, protocol.DestroyConsent, protocol.DestroyDeny:
	default:
		return fmt.Errorf("--destroy %q: must be allow, consent or deny", p.Destroy)
	}
	if len(p.DebugPrograms) > 0 && !p.DebugCommands {
		return errors.New("--debug-programs needs --allow-debug-commands")
	}
	for _, prog := range p.DebugPrograms {
		if strings.TrimSpace(prog) == "" {
			return errors.New("--debug-programs: an empty program name")
		}
	}
	if len(p.Actions) > 0 && !p.runsType(protocol.JobTypeAction) {
		return fmt.Errorf("--actions needs the job type %s in --job-types", protocol.JobTypeAction)
	}
	for _, a := range p.Actions {
		if strings.TrimSpace(a) == "" {
			return errors.New("--actions: an empty action name")
		}
	}
	return nil
}

// Report is the policy as the runner reports it, given the job types the
// runner can run: the types it runs, and the digest of it all.
func (p Policy) Report(canRun []string) protocol.CustomerPolicy {
	var types []string
	for _, t := range canRun {
		if p.runsType(t) {
			types = append(types, t)
		}
	}
	slices.Sort(types)
	r := protocol.CustomerPolicy{JobTypes: nonNil(types), DebugCommands: p.DebugCommands,
		DebugPrograms: slices.Sorted(slices.Values(p.DebugPrograms)), Actions: slices.Sorted(slices.Values(p.Actions)), Destroy: p.destroy(), Concurrency: p.Concurrency}
	b, _ := json.Marshal(r) // Digest is empty here
	sum := sha256.Sum256(b)
	r.Digest = "sha256:" + hex.EncodeToString(sum[:])
	return r
}

func (p Policy) destroy() string {
	if p.Destroy == "" {
		return protocol.DestroyAllow
	}
	return p.Destroy
}

// runsType: debug commands by DebugCommands, other types by JobTypes.
func (p Policy) runsType(t string) bool {
	if t == protocol.JobTypeCommand {
		return p.DebugCommands
	}
	return len(p.JobTypes) == 0 || slices.Contains(p.JobTypes, t) || t == protocol.JobTypeNoop
}

// CheckJob says why the policy refuses job, or nil: its type, a debug
// command's program, an action's name, a deprovision or teardown (by the job's origin) without
// the customer's consent (consents are those that hold now).
func (p Policy) CheckJob(job protocol.Job, consents []protocol.Consent) error {
	var program, opKind string
	switch job.Type {
	case protocol.JobTypeCommand:
		var m protocol.CommandManifest
		if err := json.Unmarshal(job.Manifest, &m); err != nil || len(m.Args) == 0 {
			return errors.New("the debug command's manifest names no program")
		}
		program = m.Args[0]
	case protocol.JobTypeAction:
		var m protocol.ActionManifest
		if err := json.Unmarshal(job.Manifest, &m); err != nil || m.Action == "" {
			return errors.New("the action's manifest names no action")
		}
		program = m.Action
	}
	if job.Origin != nil {
		opKind = job.Origin.OperationKind
	}
	types := []string{job.Type}
	if !p.runsType(job.Type) {
		types = nil
	}
	report := p.Report(types)
	if why := report.Refusal(job.Type, program, opKind, consents, time.Now()); why != "" {
		return errors.New(why)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
