package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/action"
	"github.com/outpost-dev/outpost/runner/plugins/command"
	"github.com/outpost-dev/outpost/runner/plugins/noop"
	"github.com/outpost-dev/outpost/runner/plugins/oci"
	"github.com/outpost-dev/outpost/runner/plugins/runnerupdate"
	"github.com/outpost-dev/outpost/runner/plugins/terraform"
)

// Files in a job's directory.
const (
	jobFile    = "job.json"    // the protocol.Job, written by the runner
	resultFile = "result.json" // the Result, written by the job process
	spoolFile  = "logs.jsonl"  // the log spool, written by the runner
	tmpDir     = "tmp"         // the job's TMPDIR
)

// builtinPlugins are the job types the runner's own binary runs. Helm's,
// and chart builds, run in a binary of its own (Config.Helm):
// linking helm's SDK would add tens of milliseconds of package
// initialisation to every job process.
func builtinPlugins() plugins.Registry {
	return plugins.Registry{
		protocol.JobTypeNoop:         noop.New,
		protocol.JobTypeCommand:      command.New,
		protocol.JobTypeAction:       action.New,
		protocol.JobTypeTerraform:    terraform.New,
		protocol.JobTypeOCI:          oci.New,
		protocol.JobTypeRunnerUpdate: runnerupdate.New,
	}
}

// Result is how the job process tells the runner how the job ended, in the
// job directory's result.json.
type Result struct {
	Status   string          `json:"status"` // protocol.StatusSucceeded or protocol.StatusFailed
	ExitCode *int            `json:"exit_code,omitempty"`
	Outputs  json.RawMessage `json:"outputs,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// RunJobProcess is the per-job process, "outpost-runner job --dir DIR": it
// reads DIR/job.json, runs the plugin of the job's type, which writes the
// job's logs to stdout and stderr, and writes DIR/result.json. ctx should end
// on SIGTERM and SIGINT; the plugin then decides how to stop. An error means
// no result could be written.
func RunJobProcess(ctx context.Context, dir string, stdout, stderr io.Writer) error {
	return RunJobProcessWith(ctx, dir, builtinPlugins(), stdout, stderr)
}

// RunJobProcessWith is RunJobProcess with the given plugins, for a job
// binary of its own (cmd/outpost-runner-helm).
func RunJobProcessWith(ctx context.Context, dir string, registry plugins.Registry, stdout, stderr io.Writer) error {
	dieWithRunner()
	res := executeJob(ctx, dir, registry, stdout, stderr)
	if err := writeJSONFile(filepath.Join(dir, resultFile), res); err != nil {
		return fmt.Errorf("writing the job's result: %w", err)
	}
	return nil
}

func executeJob(ctx context.Context, dir string, registry plugins.Registry, stdout, stderr io.Writer) Result {
	var job protocol.Job
	if err := readJSONFile(filepath.Join(dir, jobFile), &job); err != nil {
		return failed(fmt.Errorf("reading the job: %w", err))
	}
	newPlugin, ok := registry[job.Type]
	if !ok {
		return failed(fmt.Errorf("unknown job type %q: this runner runs %s",
			job.Type, strings.Join(registry.Types(), ", ")))
	}
	p := newPlugin()
	defer func() {
		if err := p.Cleanup(); err != nil {
			fmt.Fprintf(stderr, "%s plugin: cleanup: %v\n", job.Type, err)
		}
	}()
	if err := p.Validate(job.Manifest); err != nil {
		return failed(fmt.Errorf("invalid %s manifest: %w", job.Type, err))
	}
	run := plugins.Run{Dir: dir, Env: os.Environ(), Stdout: stdout, Stderr: stderr}
	if job.InputsDeferred {
		if _, ok := p.(plugins.DeferredInputs); !ok {
			return failed(fmt.Errorf("the %s plugin cannot run a job whose inputs are deferred", job.Type))
		}
		run.Inputs = func(ctx context.Context) (json.RawMessage, error) { return readInputs(ctx, os.Stdin) }
	}
	code, err := p.Execute(ctx, run)
	if err != nil {
		return failed(err)
	}
	res := Result{Status: protocol.StatusSucceeded, ExitCode: &code}
	if code != 0 {
		res.Status = protocol.StatusFailed
		res.Error = fmt.Sprintf("exited with code %d", code)
	}
	if res.Outputs, err = p.Outputs(); err != nil {
		res.Status = protocol.StatusFailed
		res.Error = fmt.Sprintf("%s plugin: outputs: %v", job.Type, err)
	}
	return res
}

// readInputs reads a deferred job's inputs: the one line of JSON the runner
// writes to the job process's standard input once it has them.
func readInputs(ctx context.Context, r io.Reader) (json.RawMessage, error) {
	type answer struct {
		line []byte
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReaderSize(r, 64<<10).ReadBytes('\n')
		got <- answer{line, err}
	}()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the job's inputs: %w", context.Cause(ctx))
	case a := <-got:
		line := bytes.TrimSpace(a.line)
		switch {
		case len(line) == 0 && a.err != nil:
			return nil, fmt.Errorf("waiting for the job's inputs: the runner closed the pipe: %w", a.err)
		case !json.Valid(line):
			return nil, errors.New("the job's inputs are not valid JSON")
		}
		return line, nil
	}
}

func failed(err error) Result {
	return Result{Status: protocol.StatusFailed, Error: err.Error()}
}

// ReadResult reads the Result the job process wrote in dir (never through
// a link the job put in its place: openJobFile).
func ReadResult(dir string) (Result, error) {
	var res Result
	err := readJSONFile(filepath.Join(dir, resultFile), &res)
	return res, err
}

func readJSONFile(path string, v any) error {
	f, err := openJobFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

// writeJSONFile writes v to path through a temporary file and a rename, so a
// reader never sees half of it.
func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// dieWithRunner kills the job's process group on the SIGHUP the kernel sends when the
// runner dies (Pdeathsig; no race is left open, see the package doc).
func dieWithRunner() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		<-hup
		// Tools may start their own process groups (terraform-exec does):
		// kill every descendant first, then the job's own group.
		killDescendants(os.Getpid())
		_ = syscall.Kill(-os.Getpid(), syscall.SIGKILL)
		os.Exit(137)
	}()
}

// killDescendants SIGKILLs every process below pid, found through /proc.
// Stopping each one first keeps a dying parent's children from being
// reparented out of reach while the tree is walked.
func killDescendants(pid int) {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command (which may hold spaces) start after
		// its closing parenthesis: state, then ppid.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			_ = syscall.Kill(c, syscall.SIGSTOP)
			walk(c)
			_ = syscall.Kill(c, syscall.SIGKILL)
		}
	}
	walk(pid)
}

// JobCommand is "<binary> job --dir DIR": it runs the job in DIR with the
// plugins (nil: the runner's built-in ones) and returns the exit code. It is
// the job sub-command of outpost-runner and of outpost-runner-helm.
func JobCommand(binary string, args []string, registry plugins.Registry, stderr io.Writer) int {
	if registry == nil {
		registry = builtinPlugins()
	}
	fs := flag.NewFlagSet(binary+" job", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the job's directory, holding job.json (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case *dir == "":
		fmt.Fprintf(stderr, "%s job: --dir is required\n", binary)
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "%s job: unexpected argument %q\n", binary, fs.Arg(0))
		return 2
	}
	// SIGTERM and SIGINT reach the whole job (its process group): the job
	// process stays to report how the job took them.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := RunJobProcessWith(ctx, *dir, registry, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(stderr, "%s job: %v\n", binary, err)
		return 1
	}
	return 0
}
