package support

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// Defaults of a support manifest.
const (
	defaultLogSince = 3600
	defaultLogTail  = 500
	// maxRunnerLog bounds the runner log part (the runner keeps less).
	maxRunnerLog = 4 << 20
)

// New returns a support plugin for one job.
func New() plugins.Plugin { return &plugin{} }

type plugin struct {
	m       protocol.SupportManifest
	outputs protocol.SupportOutputs
	done    bool
}

func (p *plugin) Validate(manifest json.RawMessage) error {
	if err := plugins.DecodeManifest(manifest, &p.m); err != nil {
		return err
	}
	m := &p.m
	switch {
	case m.MaxBytes < 0:
		return fmt.Errorf("max_bytes: must not be negative, got %d", m.MaxBytes)
	case m.LogSinceSeconds < 0:
		return fmt.Errorf("log_since_seconds: must not be negative, got %d", m.LogSinceSeconds)
	case m.LogTailLines < 0:
		return fmt.Errorf("log_tail_lines: must not be negative, got %d", m.LogTailLines)
	}
	for i, r := range m.Releases {
		if r.Release == "" || r.Namespace == "" {
			return fmt.Errorf("releases[%d]: release and namespace are required", i)
		}
	}
	for name := range m.Files {
		if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
			return fmt.Errorf("files: %q is not a relative file name", name)
		}
	}
	if m.MaxBytes == 0 {
		m.MaxBytes = protocol.DefaultSupportBundleMaxBytes
	}
	if m.LogSinceSeconds == 0 {
		m.LogSinceSeconds = defaultLogSince
	}
	if m.LogTailLines == 0 {
		m.LogTailLines = defaultLogTail
	}
	return nil
}

// Execute collects every part into the job directory's bundle file. A part that cannot be
// collected is an "unavailable: <reason>" entry, not a failure; a bundle over the cap is.
func (p *plugin) Execute(ctx context.Context, run plugins.Run) (int, error) {
	path := filepath.Join(run.Dir, protocol.SupportBundleFile)
	a, err := newArchive(path, newRedactor(p.m.Redact))
	if err != nil {
		return 0, err
	}
	c := &collector{a: a, m: &p.m, log: run.Stdout}
	if err := c.collect(ctx, run.Dir); err != nil {
		a.close()
		return 0, err
	}
	size, sum, err := a.close()
	if err != nil {
		return 0, err
	}
	if size > p.m.MaxBytes {
		os.Remove(path)
		return 0, fmt.Errorf("the support bundle is %d bytes, over its cap of %d bytes: ask for a narrower logs request instead", size, p.m.MaxBytes)
	}
	fmt.Fprintf(run.Stdout, "outpost: support bundle: %d parts, %d bytes, sha256 %s\n", len(a.parts), size, sum)
	p.outputs = protocol.SupportOutputs{Parts: a.parts, Bytes: size, SHA256: sum, Unavailable: c.unavailable}
	p.done = true
	return 0, nil
}

func (p *plugin) Outputs() (json.RawMessage, error) {
	if !p.done {
		return nil, nil
	}
	return json.Marshal(p.outputs)
}

func (p *plugin) Cleanup() error { return nil }

// collector adds the parts to the archive.
type collector struct {
	a           *archive
	m           *protocol.SupportManifest
	log         interface{ Write([]byte) (int, error) }
	unavailable []string
}

// unavailableEntry records a part that could not be collected, in the archive and the outputs.
func (c *collector) unavailableEntry(name string, why error) error {
	msg := "unavailable: " + c.a.redact.redact(why.Error())
	c.unavailable = append(c.unavailable, name+": "+msg)
	fmt.Fprintf(c.log, "outpost: %s %s\n", name, msg)
	return c.a.add(name, msg+"\n")
}

func (c *collector) collect(ctx context.Context, dir string) error {
	log, err := os.ReadFile(filepath.Join(dir, protocol.SupportRunnerLogFile))
	switch {
	case err != nil:
		err = c.unavailableEntry("runner.log", fmt.Errorf("the runner left no log for the job: %w", err))
	default:
		if len(log) > maxRunnerLog {
			log = fromFirstLine(log[len(log)-maxRunnerLog:])
		}
		err = c.a.add("runner.log", string(log))
	}
	if err != nil {
		return err
	}
	names := make([]string, 0, len(c.m.Files))
	for name := range c.m.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := c.a.add(name, c.m.Files[name]); err != nil {
			return err
		}
	}
	if err := c.cluster(ctx); err != nil {
		return err
	}
	return c.a.add("index.txt", c.index())
}

// index lists the parts and what was unavailable.
func (c *collector) index() string {
	var b strings.Builder
	b.WriteString("Outpost support bundle. Every part is redacted: the install's sensitive values and anything that looks like a credential show as " + Redacted + ".\n\nparts:\n")
	for _, p := range c.a.parts {
		b.WriteString("  " + p + "\n")
	}
	if len(c.unavailable) > 0 {
		b.WriteString("\nunavailable:\n")
		for _, u := range c.unavailable {
			b.WriteString("  " + u + "\n")
		}
	}
	return b.String()
}

var errNoCluster = errors.New("the install has no cluster (no kubeconfig: no sandbox kubeconfig output and no helm_chart component)")
