package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// Files of the step in the job's directory.
const (
	stepDir     = "action"  // holds the script and the outputs file
	outputsFile = "outputs" // OUTPOST_OUTPUTS
)

// pipeWait bounds how long the plugin waits for the step's output pipes
// after it exited (a background process may hold them open).
const pipeWait = 2 * time.Second

var (
	fileName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// New returns an action plugin for one job.
func New() plugins.Plugin { return &plugin{} }

type plugin struct {
	m          protocol.ActionManifest
	secrets    *plugins.Secrets
	ran        bool
	exitCode   int
	outputs    map[string]string
	outputsErr error
}

func (p *plugin) Validate(manifest json.RawMessage) error {
	if err := plugins.DecodeManifest(manifest, &p.m); err != nil {
		return err
	}
	m := &p.m
	p.secrets = plugins.NewSecrets(m.Scrub...)
	switch {
	case m.Action == "":
		return errors.New("action: required (the action's name)")
	case m.Script == "" && len(m.Command) == 0:
		return errors.New("script: give a script or a command")
	case m.Script != "" && len(m.Command) > 0:
		return errors.New("command: give a script or a command, not both")
	case len(m.Script) > protocol.MaxActionScriptBytes:
		return fmt.Errorf("script: %d bytes, more than the limit of %d", len(m.Script), protocol.MaxActionScriptBytes)
	case len(m.Command) > 0 && m.Command[0] == "":
		return errors.New("command[0]: the program must not be empty")
	case m.TimeoutMS <= 0:
		return fmt.Errorf("timeout_ms: must be more than 0, got %d", m.TimeoutMS)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Env)) {
		switch {
		case !protocol.ValidEnvName(name):
			return fmt.Errorf("env.%s: not a valid environment variable name", name)
		case name == protocol.EnvActionOutputs:
			return fmt.Errorf("env.%s: the runner sets it (the path of the outputs file)", name)
		}
	}
	for i, name := range m.SensitiveOutputs {
		if !protocol.ValidActionOutputName(name) {
			return fmt.Errorf("sensitive_outputs[%d]: %q is not an output's name (a letter or _, then letters, digits and _)", i, name)
		}
	}
	return nil
}

// Execute runs the step and waits for it. Like the command plugin it does
// not act on ctx: a cancel or the timeout signals the job's whole process
// group, the step included, and Execute reports how the step took it.
func (p *plugin) Execute(_ context.Context, run plugins.Run) (int, error) {
	dir := filepath.Join(run.Dir, stepDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("creating the step's directory: %w", err)
	}
	argv, err := p.argv(dir)
	if err != nil {
		return 0, err
	}
	watch := &outputsWatch{path: filepath.Join(dir, outputsFile), sensitive: p.m.SensitiveOutputs, secrets: p.secrets}
	stdout, stderr := p.secrets.Writer(run.Stdout), p.secrets.Writer(run.Stderr)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = run.Dir
	cmd.Env = p.env(run.Env, watch.path)
	cmd.Stdout, cmd.Stderr = watch.writer(stdout), watch.writer(stderr)
	cmd.WaitDelay = pipeWait
	if err := cmd.Start(); err != nil {
		return 0, p.secrets.Error(fmt.Errorf("starting %s: %w", p.what(), err))
	}
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return 0, p.secrets.Error(fmt.Errorf("running %s: %w", p.what(), err))
	}
	p.ran, p.exitCode = true, plugins.ExitCode(cmd.ProcessState)
	p.outputs, p.outputsErr = readOutputs(watch.path)
	watch.add(p.outputs)
	if p.outputsErr != nil {
		p.outputs = nil
		p.outputsErr = p.secrets.Error(fmt.Errorf("the outputs file ($%s): %w", protocol.EnvActionOutputs, p.outputsErr))
		fmt.Fprintf(stderr, "outpost: %v: the step fails\n", p.outputsErr)
		if p.exitCode == 0 {
			p.exitCode = 1
		}
	}
	return p.exitCode, errors.Join(stdout.Flush(), stderr.Flush())
}

// argv is what runs: the command, or the script written to dir, by the
// interpreter its #! line names (/bin/sh without one).
func (p *plugin) argv(dir string) ([]string, error) {
	if len(p.m.Command) > 0 {
		return p.m.Command, nil
	}
	name := filepath.Base(p.m.ScriptName)
	if !fileName.MatchString(name) || name == "." || name == ".." || name == outputsFile {
		name = "script"
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(p.m.Script), 0o700); err != nil {
		return nil, fmt.Errorf("writing the script: %w", err)
	}
	first, _, _ := strings.Cut(p.m.Script, "\n")
	interp, ok := strings.CutPrefix(strings.TrimSuffix(first, "\r"), "#!")
	if !ok {
		return []string{"/bin/sh", path}, nil
	}
	// As the kernel reads it: the interpreter, then at most one argument.
	prog, arg, _ := strings.Cut(strings.TrimSpace(interp), " ")
	if prog == "" {
		return nil, fmt.Errorf("script %s: its #! line names no interpreter", p.what())
	}
	if arg = strings.TrimSpace(arg); arg != "" {
		return []string{prog, arg, path}, nil
	}
	return []string{prog, path}, nil
}

// env is the job's clean environment, the step's Env, and OUTPOST_OUTPUTS.
func (p *plugin) env(base []string, outputs string) []string {
	env := slices.Clone(base)
	for _, k := range slices.Sorted(maps.Keys(p.m.Env)) {
		env = append(env, k+"="+p.m.Env[k])
	}
	return append(env, protocol.EnvActionOutputs+"="+outputs)
}

// what names the step in errors.
func (p *plugin) what() string {
	switch {
	case len(p.m.Command) > 0:
		return p.m.Command[0]
	case p.m.ScriptName != "":
		return p.m.ScriptName
	}
	return "the script"
}

// Outputs are the step's exit code and outputs; a bad outputs file is an
// error too, which fails the job.
func (p *plugin) Outputs() (json.RawMessage, error) {
	if !p.ran {
		return nil, nil
	}
	out := protocol.ActionOutputs{ExitCode: p.exitCode, Outputs: p.outputs}
	if p.outputsErr != nil {
		out.OutputsError = p.outputsErr.Error()
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return raw, p.outputsErr
}

func (p *plugin) Cleanup() error { return nil }
