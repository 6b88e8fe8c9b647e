package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// DefaultMaxOutputBytes bounds the captured output when the manifest does not.
const DefaultMaxOutputBytes = 64 << 10

// pipeWait bounds how long the plugin waits for the command's output pipes
// after the command exited (a background process may hold them open).
const pipeWait = 2 * time.Second

// New returns a command plugin for one job.
func New() plugins.Plugin { return &plugin{} }

type plugin struct {
	manifest protocol.CommandManifest
	output   *capture
	exitCode int
	ran      bool
}

func (p *plugin) Validate(manifest json.RawMessage) error {
	if err := plugins.DecodeManifest(manifest, &p.manifest); err != nil {
		return err
	}
	m := &p.manifest
	switch {
	case len(m.Args) == 0:
		return errors.New("args: at least one argument (the command) is required")
	case m.Args[0] == "":
		return errors.New("args[0]: the command must not be empty")
	case m.MaxOutputBytes < 0:
		return fmt.Errorf("max_output_bytes: must not be negative, got %d", m.MaxOutputBytes)
	case m.MaxOutputBytes > protocol.MaxOutputsBytes:
		return fmt.Errorf("max_output_bytes: must be at most %d, got %d", protocol.MaxOutputsBytes, m.MaxOutputBytes)
	case m.MaxOutputBytes == 0:
		m.MaxOutputBytes = DefaultMaxOutputBytes
	}
	return nil
}

// Execute runs the command and waits for it. It does not act on ctx: when the
// job is asked to stop, the runner signals the job's whole process group, the
// command included, and Execute reports how the command took it (143 for a
// command that SIGTERM ended).
func (p *plugin) Execute(_ context.Context, run plugins.Run) (int, error) {
	p.output = &capture{max: p.manifest.MaxOutputBytes}
	cmd := exec.Command(p.manifest.Args[0], p.manifest.Args[1:]...)
	cmd.Dir = run.Dir
	cmd.Env = run.Env
	cmd.Stdout = io.MultiWriter(run.Stdout, p.output)
	cmd.Stderr = io.MultiWriter(run.Stderr, p.output)
	cmd.WaitDelay = pipeWait
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", p.manifest.Args[0], err)
	}
	err := cmd.Wait()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return 0, fmt.Errorf("running %s: %w", p.manifest.Args[0], err)
	}
	p.ran = true
	p.exitCode = plugins.ExitCode(cmd.ProcessState)
	return p.exitCode, nil
}

func (p *plugin) Outputs() (json.RawMessage, error) {
	if !p.ran {
		return nil, nil
	}
	text, truncated := p.output.result()
	return json.Marshal(protocol.CommandOutputs{
		ExitCode:        p.exitCode,
		Output:          text,
		OutputTruncated: truncated,
	})
}

func (p *plugin) Cleanup() error { return nil }

// capture keeps the head of what is written to it, up to max bytes. Stdout
// and stderr write to it from two goroutines, interleaved as they come.
type capture struct {
	mu        sync.Mutex
	buf       []byte
	max       int
	truncated bool
}

// Write never fails, so a full capture never stops the command's logs.
func (c *capture) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := b
	if room := c.max - len(c.buf); len(keep) > room {
		keep = keep[:max(room, 0)]
		c.truncated = true
	}
	c.buf = append(c.buf, keep...)
	return len(b), nil
}

// result returns the captured text; when it was cut, a character split by the
// cut is dropped.
func (c *capture) result() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf
	if c.truncated {
		i := len(b) - 1
		for i > 0 && len(b)-i < utf8.UTFMax && !utf8.RuneStart(b[i]) {
			i--
		}
		if i >= 0 && !utf8.FullRune(b[i:]) {
			b = b[:i]
		}
	}
	return string(b), c.truncated
}
