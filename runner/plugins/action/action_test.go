package action

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// step is a step's run: its plugin, exit code, logs and outputs.
type step struct {
	code           int
	stdout, stderr string
	out            protocol.ActionOutputs
	outErr         error
}

// runStep validates and executes m in a fresh job directory, with the
// clean environment a job gets (PATH only).
func runStep(t *testing.T, m protocol.ActionManifest) step {
	t.Helper()
	if m.TimeoutMS == 0 {
		m.TimeoutMS = 60_000
	}
	if m.Action == "" {
		m.Action = "migrate"
	}
	raw, _ := json.Marshal(m)
	p := New()
	if err := p.Validate(raw); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	run := plugins.Run{Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}, Stdout: &stdout, Stderr: &stderr}
	code, err := p.Execute(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	s := step{code: code, stdout: stdout.String(), stderr: stderr.String()}
	var rawOut json.RawMessage
	rawOut, s.outErr = p.Outputs()
	if err := json.Unmarshal(rawOut, &s.out); err != nil {
		t.Fatalf("outputs %s: %v", rawOut, err)
	}
	return s
}

func TestScriptWritesKeyValueOutputs(t *testing.T) {
	s := runStep(t, protocol.ActionManifest{ScriptName: "actions/migrate.sh", Script: `echo "migrating $DB_NAME"
cat >"$OUTPOST_OUTPUTS" <<'OUT'
# the schema's version
version=42

note=a = b # not a comment
OUT
exit 3
`, Env: map[string]string{"DB_NAME": "orders"}})
	if s.code != 3 || s.out.ExitCode != 3 || s.outErr != nil {
		t.Fatalf("exit code %d (outputs say %d), outputs error %v: want 3, none", s.code, s.out.ExitCode, s.outErr)
	}
	if s.stdout != "migrating orders\n" {
		t.Errorf("stdout %q", s.stdout)
	}
	if len(s.out.Outputs) != 2 || s.out.Outputs["version"] != "42" || s.out.Outputs["note"] != "a = b # not a comment" {
		t.Errorf("outputs %v", s.out.Outputs)
	}
}

func TestScriptWithAnInterpreterWritesJSONOutputs(t *testing.T) {
	// #! with one argument, as the kernel reads it; no output file: none.
	s := runStep(t, protocol.ActionManifest{Script: "#!/bin/sh -e\nprintf '%s' '{\"url\": \"https://x\", \"multi\": \"a\\nb\"}' >\"$OUTPOST_OUTPUTS\"\nfalse\necho never\n"})
	if s.code != 1 || strings.Contains(s.stdout, "never") {
		t.Fatalf("exit code %d, stdout %q: want the -e of the #! line to stop the script at false", s.code, s.stdout)
	}
	if s.out.Outputs["url"] != "https://x" || s.out.Outputs["multi"] != "a\nb" || s.outErr != nil {
		t.Errorf("outputs %v, error %v", s.out.Outputs, s.outErr)
	}
	none := runStep(t, protocol.ActionManifest{Command: []string{"true"}})
	if none.code != 0 || none.out.Outputs != nil || none.outErr != nil {
		t.Errorf("a step without outputs: %+v", none)
	}
}

func TestBadOutputsFailTheStep(t *testing.T) {
	for _, tc := range []struct{ name, write, want string }{
		{"a line without =", `printf 'a=1\n\n# c\nnonsense\n'`, "line 4: not key=value"},
		{"a bad key", `printf 'ok=1\nmy-key=2\n'`, `line 2: key "my-key"`},
		{"a JSON number", `echo '{"n": 5}'`, "the value of n is not a string"},
		{"two JSON values", `echo '{"a": "1"} {"b": "2"}'`, "more than one JSON value"},
		{"over the limit", `head -c 70000 /dev/zero | tr '\0' a | sed 's/^/k=/'`, "more than the limit of 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runStep(t, protocol.ActionManifest{Command: []string{"sh", "-c", tc.write + ` >"$OUTPOST_OUTPUTS"`}})
			if s.code != 1 || s.out.ExitCode != 1 {
				t.Errorf("exit code %d (outputs say %d), want 1: the step ran fine, its outputs did not", s.code, s.out.ExitCode)
			}
			if s.outErr == nil || !strings.Contains(s.outErr.Error(), tc.want) || !strings.Contains(s.out.OutputsError, tc.want) {
				t.Errorf("outputs error %v, outputs_error %q: want %q", s.outErr, s.out.OutputsError, tc.want)
			}
			if s.out.Outputs != nil || !strings.Contains(s.stderr, "$OUTPOST_OUTPUTS") {
				t.Errorf("outputs %v, stderr %q: want none, and the log saying why", s.out.Outputs, s.stderr)
			}
		})
	}
	// A step that failed by itself keeps its exit code.
	s := runStep(t, protocol.ActionManifest{Command: []string{"sh", "-c", `echo x >"$OUTPOST_OUTPUTS"; exit 9`}})
	if s.code != 9 || s.outErr == nil {
		t.Errorf("exit code %d, outputs error %v: want 9 and line 1's error", s.code, s.outErr)
	}
}

func TestStepSeesOnlyTheJobsEnvironment(t *testing.T) {
	t.Setenv("RUNNER_OWN_VARIABLE", "the-runner-only")
	s := runStep(t, protocol.ActionManifest{Command: []string{"env"}, Env: map[string]string{"REGION": "eu-west-1", "PATH": "/bin:/usr/bin"}})
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(s.stdout), "\n") {
		name, value, _ := strings.Cut(l, "=")
		if name == protocol.EnvActionOutputs && strings.HasSuffix(value, "/action/outputs") {
			value = "…/action/outputs"
		}
		got = append(got, name+"="+value)
	}
	want := "OUTPOST_OUTPUTS=…/action/outputs PATH=/bin:/usr/bin REGION=eu-west-1"
	if strings.Join(slices.Sorted(slices.Values(got)), " ") != want {
		t.Errorf("the step's environment %q, want %q", got, want)
	}
}

func TestSensitiveValuesAreMaskedInTheLog(t *testing.T) {
	s := runStep(t, protocol.ActionManifest{
		Script: `echo "password=$DB_PASSWORD" >>"$OUTPOST_OUTPUTS"
echo "token=tok-1234567" >>"$OUTPOST_OUTPUTS"
echo "user=admin-user" >>"$OUTPOST_OUTPUTS"
echo "connecting with $DB_PASSWORD"
echo "got tok-1234567 for admin-user"
echo "again tok-1234567" >&2
`,
		Env:              map[string]string{"DB_PASSWORD": "hunter2-secret"},
		Scrub:            []string{"hunter2-secret"},
		SensitiveOutputs: []string{"token"},
	})
	log := s.stdout + s.stderr
	if strings.Contains(log, "tok-1234567") || strings.Contains(log, "hunter2-secret") {
		t.Fatalf("a sensitive value is in the log:\n%s", log)
	}
	if s.stdout != "connecting with (sensitive value)\ngot (sensitive value) for admin-user\n" || s.stderr != "again (sensitive value)\n" {
		t.Errorf("stdout %q stderr %q", s.stdout, s.stderr)
	}
	// The outputs carry the values: the control plane seals the sensitive ones.
	if s.out.Outputs["token"] != "tok-1234567" || s.out.Outputs["user"] != "admin-user" {
		t.Errorf("outputs %v", s.out.Outputs)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	long := strings.Repeat("x", protocol.MaxActionScriptBytes+1)
	for field, m := range map[string]protocol.ActionManifest{
		"action":               {Script: "true", TimeoutMS: 1},
		"script":               {Action: "a", TimeoutMS: 1},
		"command":              {Action: "a", Script: "true", Command: []string{"true"}, TimeoutMS: 1},
		"script: 262145 bytes": {Action: "a", Script: long, TimeoutMS: 1},
		"command[0]":           {Action: "a", Command: []string{""}, TimeoutMS: 1},
		"timeout_ms":           {Action: "a", Script: "true"},
		"env.1BAD":             {Action: "a", Script: "true", TimeoutMS: 1, Env: map[string]string{"1BAD": "x"}},
		"env.OUTPOST_OUTPUTS":  {Action: "a", Script: "true", TimeoutMS: 1, Env: map[string]string{"OUTPOST_OUTPUTS": "/tmp/x"}},
		"sensitive_outputs[1]": {Action: "a", Script: "true", TimeoutMS: 1, SensitiveOutputs: []string{"ok", "not-ok"}},
	} {
		raw, _ := json.Marshal(m)
		if err := New().Validate(raw); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate for %s: %v", field, err)
		}
	}
}
