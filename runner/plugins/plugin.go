package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
)

// Plugin runs one job of one type. The job process calls Validate, then
// Execute (when Validate succeeded), then Outputs (when Execute succeeded),
// and always Cleanup.
type Plugin interface {
	// Validate decodes and checks the job's manifest. Its error is shown to
	// the user as it is, so it names the offending field.
	Validate(manifest json.RawMessage) error
	// Execute does the work and returns the job's exit code (0: success); an error means it could not
	// be done at all. ctx ends on SIGTERM or SIGINT, which Execute's own processes receive too.
	Execute(ctx context.Context, run Run) (exitCode int, err error)
	// Outputs returns the job's outputs as a JSON value, or nil for none.
	Outputs() (json.RawMessage, error)
	// Cleanup releases whatever Validate and Execute left behind.
	Cleanup() error
}

// Run is what Execute works with.
type Run struct {
	Dir    string   // the job's working directory
	Env    []string // the job's clean environment, for processes it starts
	Stdout io.Writer
	Stderr io.Writer
	// Inputs, set only for a job whose inputs were deferred, waits for them
	// (they may take as long as the job's dependencies do) and returns them
	// as the control plane gave them. It fails when ctx ends first.
	Inputs func(ctx context.Context) (json.RawMessage, error)
}

// DeferredInputs is implemented by the plugins that can run a job queued
// before its inputs are known: they prepare, then call Run.Inputs. The job
// process refuses such a job for any other plugin.
type DeferredInputs interface {
	TakesDeferredInputs()
}

// Factory returns a new plugin for one job.
type Factory func() Plugin

// Registry maps job types to the plugin that runs them.
type Registry map[string]Factory

// Types returns the job types of the registry, sorted: the runner's
// capabilities.
func (r Registry) Types() []string {
	types := make([]string, 0, len(r))
	for t := range r {
		types = append(types, t)
	}
	slices.Sort(types)
	return types
}

// DecodeManifest decodes a job manifest into v. An empty or null manifest
// leaves v as it is, so a plugin's defaults apply.
func DecodeManifest(manifest json.RawMessage, v any) error {
	if len(bytes.TrimSpace(manifest)) == 0 || string(bytes.TrimSpace(manifest)) == "null" {
		return nil
	}
	if err := json.Unmarshal(manifest, v); err != nil {
		return fmt.Errorf("decoding manifest: %w", err)
	}
	return nil
}

// ExitCode reports how a finished process ended, the way a shell does: its
// exit status, or 128+N when signal N killed it (137 for SIGKILL, 143 for
// SIGTERM).
func ExitCode(state *os.ProcessState) int {
	if state == nil {
		return -1
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return state.ExitCode()
}
