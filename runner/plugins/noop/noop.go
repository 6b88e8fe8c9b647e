package noop

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// New returns a noop plugin for one job.
func New() plugins.Plugin { return &plugin{} }

type plugin struct {
	manifest protocol.NoopManifest
}

func (p *plugin) Validate(manifest json.RawMessage) error {
	if err := plugins.DecodeManifest(manifest, &p.manifest); err != nil {
		return err
	}
	if p.manifest.SleepMS < 0 {
		return fmt.Errorf("sleep_ms: must not be negative, got %d", p.manifest.SleepMS)
	}
	if p.manifest.ExitCode < 0 || p.manifest.ExitCode > 255 {
		return fmt.Errorf("exit_code: must be between 0 and 255, got %d", p.manifest.ExitCode)
	}
	return nil
}

func (p *plugin) Execute(ctx context.Context, run plugins.Run) (int, error) {
	for _, line := range p.manifest.Lines {
		if _, err := fmt.Fprintln(run.Stdout, line); err != nil {
			return 0, fmt.Errorf("writing to stdout: %w", err)
		}
	}
	if p.manifest.SleepMS > 0 {
		sleep := time.NewTimer(time.Duration(p.manifest.SleepMS) * time.Millisecond)
		defer sleep.Stop()
		select {
		case <-sleep.C:
		case <-ctx.Done():
			return 0, fmt.Errorf("interrupted while sleeping: %w", context.Cause(ctx))
		}
	}
	return p.manifest.ExitCode, nil
}

func (p *plugin) Outputs() (json.RawMessage, error) {
	if p.manifest.Outputs == nil {
		return nil, nil
	}
	return json.Marshal(p.manifest.Outputs)
}

func (p *plugin) Cleanup() error { return nil }
