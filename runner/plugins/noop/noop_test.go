package noop

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/runner/plugins"
)

func TestNoopPrintsAndEndsAsTold(t *testing.T) {
	p := New()
	if err := p.Validate(json.RawMessage(`{"lines":["a","b"],"exit_code":7,"outputs":{"x":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code, err := p.Execute(context.Background(), plugins.Run{Stdout: &out, Stderr: &out})
	if err != nil || code != 7 {
		t.Errorf("Execute: %d, %v; want 7", code, err)
	}
	if out.String() != "a\nb\n" {
		t.Errorf("stdout %q", out.String())
	}
	if o, err := p.Outputs(); err != nil || string(o) != `{"x":"1"}` {
		t.Errorf("Outputs: %s, %v", o, err)
	}
}

func TestNoopStopsSleepingWhenAskedTo(t *testing.T) {
	p := New()
	if err := p.Validate(json.RawMessage(`{"sleep_ms":3600000}`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Execute(ctx, plugins.Run{}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("Execute with an ended context: %v, want interrupted", err)
	}
}

func TestNoopValidateNamesTheField(t *testing.T) {
	for manifest, field := range map[string]string{
		`{"sleep_ms":-1}`:    "sleep_ms",
		`{"exit_code":300}`:  "exit_code",
		`{"lines":"nope"}`:   "lines",
		`{"sleep_ms":"one"}`: "sleep_ms",
	} {
		if err := New().Validate(json.RawMessage(manifest)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate(%s): %v, want an error naming %s", manifest, err, field)
		}
	}
}
