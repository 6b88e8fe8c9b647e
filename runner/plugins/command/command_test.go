package command

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

func execute(t *testing.T, manifest string, run plugins.Run) (plugins.Plugin, int) {
	t.Helper()
	p := New()
	if err := p.Validate(json.RawMessage(manifest)); err != nil {
		t.Fatal(err)
	}
	code, err := p.Execute(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return p, code
}

func outputs(t *testing.T, p plugins.Plugin) protocol.CommandOutputs {
	t.Helper()
	raw, err := p.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	var o protocol.CommandOutputs
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatalf("outputs %s: %v", raw, err)
	}
	return o
}

func TestCommandRunsInTheJobDirWithTheJobEnv(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	p, code := execute(t, `{"args":["sh","-c","pwd; echo $GREETING; echo oops >&2; exit 5"]}`,
		plugins.Run{Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH"), "GREETING=hello"}, Stdout: &stdout, Stderr: &stderr})
	if code != 5 {
		t.Errorf("exit code %d, want 5", code)
	}
	if stdout.String() != dir+"\nhello\n" || stderr.String() != "oops\n" {
		t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
	o := outputs(t, p)
	if o.ExitCode != 5 || o.OutputTruncated || !strings.Contains(o.Output, "hello\n") || !strings.Contains(o.Output, "oops\n") {
		t.Errorf("outputs %+v", o)
	}
}

func TestCommandCaptureKeepsTheHeadUpToTheBound(t *testing.T) {
	var stdout bytes.Buffer
	// 300 bytes of "é" (2 bytes each); a bound of 101 falls inside one.
	p, _ := execute(t, `{"args":["sh","-c","for i in $(seq 150); do printf é; done"],"max_output_bytes":101}`,
		plugins.Run{Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}, Stdout: &stdout, Stderr: &stdout})
	if stdout.Len() != 300 {
		t.Errorf("the log got %d bytes, want all 300", stdout.Len())
	}
	o := outputs(t, p)
	if !o.OutputTruncated || o.Output != strings.Repeat("é", 50) {
		t.Errorf("captured %q (truncated %v), want the first 50 characters, truncated", o.Output, o.OutputTruncated)
	}
}

func TestCommandThatCannotStartFails(t *testing.T) {
	p := New()
	if err := p.Validate(json.RawMessage(`{"args":["/no/such/command"]}`)); err != nil {
		t.Fatal(err)
	}
	_, err := p.Execute(context.Background(), plugins.Run{Dir: t.TempDir(), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "/no/such/command") {
		t.Errorf("Execute: %v, want an error naming the command", err)
	}
	if o, _ := p.Outputs(); o != nil {
		t.Errorf("outputs %s for a command that never ran", o)
	}
}

func TestCommandValidateNamesTheField(t *testing.T) {
	for manifest, field := range map[string]string{
		`{}`:                                    "args",
		`{"args":[""]}`:                         "args[0]",
		`{"args":["ls"],"max_output_bytes":-1}`: "max_output_bytes",
		`{"args":["ls"],"max_output_bytes":99999999}`: "max_output_bytes",
	} {
		if err := New().Validate(json.RawMessage(manifest)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate(%s): %v, want an error naming %s", manifest, err, field)
		}
	}
}
