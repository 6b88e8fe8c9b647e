package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner"
	"github.com/outpost-dev/outpost/runner/customer"
)

// policyFlags adds the customer's policy to run's flags; the returned
// function sets the lists once the flags are parsed.
func policyFlags(fs *envflag.FlagSet, cfg *runner.Config) func() {
	jobTypes := fs.String("job-types", "", "comma-separated job types this runner runs, e.g. terraform,helm,oci,noop (default: every type it can run; debug commands only with --allow-debug-commands)")
	fs.BoolVar(&cfg.Policy.DebugCommands, "allow-debug-commands", false, "run debug commands (outpostctl exec): off unless the customer allows them")
	programs := fs.String("debug-programs", "", "comma-separated programs debug commands may start (by name or path; default: any, when allowed)")
	actions := fs.String("actions", "", "comma-separated actions (by name) this runner runs (default: every action, unless --job-types leaves out action)")
	fs.StringVar(&cfg.Policy.Destroy, "destroy", protocol.DestroyAllow, "whether deprovisions and component teardowns run: allow, consent (only after `outpost-runner consent`), or deny")
	fs.StringVar(&cfg.StateDir, "state-dir", "", "directory of the customer's pause, consents and job history (default: <work-dir>/state, else ~/.local/state/outpost-runner)")
	fs.DurationVar(&cfg.HistoryRetention, "history-retention", customer.DefaultRetention, "how long the job history is kept")
	fs.BoolVar(&cfg.Paused, "paused", false, "start paused, and stay paused while set (`outpost-runner resume` cannot lift it)")
	return func() {
		cfg.Policy.JobTypes, cfg.Policy.DebugPrograms = splitList(*jobTypes), splitList(*programs)
		cfg.Policy.Actions = splitList(*actions)
	}
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// pauseOnSignals pauses the runner on SIGUSR1 and resumes it on SIGUSR2.
func pauseOnSignals(ctx context.Context, dir string, log *slog.Logger) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	st := customer.State{Dir: dir}
	for {
		select {
		case <-ctx.Done():
			return
		case sig := <-sigs:
			var err error
			if sig == syscall.SIGUSR1 {
				_, err = st.Pause("SIGUSR1")
			} else {
				_, err = st.Resume()
			}
			if err != nil {
				log.Error("pausing or resuming on a signal failed", "signal", sig, "err", err)
			}
		}
	}
}

// stateFlags is the flag set of a customer command, with where its state is.
func stateFlags(name string, stderr io.Writer) (*envflag.FlagSet, func() customer.State) {
	fs := envflag.New("outpost-runner "+name, "OUTPOST_")
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", "", "the runner's state directory (as given to run)")
	workDir := fs.String("work-dir", "", "the runner's work directory (as given to run): its state is in <work-dir>/state")
	return fs, func() customer.State { return customer.State{Dir: runner.StateDir(*stateDir, *workDir)} }
}

// parse parses a customer command's flags; a code of -1 means go on.
func parse(fs *envflag.FlagSet, args []string) int {
	if err := fs.Parse(args, os.Getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	return -1
}

func pauseCommand(args []string, stdout, stderr io.Writer) int {
	fs, state := stateFlags("pause", stderr)
	reason := fs.String("reason", "", "why, kept with the pause")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	since, err := state().Pause(*reason)
	if err != nil {
		fmt.Fprintf(stderr, "outpost-runner pause: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "runner paused by the customer since %s: it claims no job until `outpost-runner resume`\n", since.Format(time.RFC3339))
	return 0
}

func resumeCommand(args []string, stdout, stderr io.Writer) int {
	fs, state := stateFlags("resume", stderr)
	if code := parse(fs, args); code >= 0 {
		return code
	}
	was, err := state().Resume()
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "outpost-runner resume: %v\n", err)
		return 1
	case !was:
		fmt.Fprintln(stdout, "the runner was not paused (a runner started with --paused stays paused until restarted without it)")
	default:
		fmt.Fprintln(stdout, "runner resumed: it claims jobs again")
	}
	return 0
}

func consentCommand(args []string, stdout, stderr io.Writer) int {
	fs, state := stateFlags("consent", stderr)
	d := fs.Duration("for", time.Hour, "how long the consent holds")
	withdraw := fs.String("withdraw", "", "withdraw the consent to this kind")
	// The kind comes first: flags after it.
	var kind string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		kind, args = args[0], args[1:]
	}
	if code := parse(fs, args); code >= 0 {
		return code
	}
	st := state()
	var err error
	switch {
	case *withdraw != "":
		err = st.Withdraw(*withdraw)
	case kind != "":
		var c protocol.Consent
		if c, err = st.Consent(kind, *d); err == nil {
			fmt.Fprintf(stdout, "consent to %s until %s\n", c.Kind, c.Until.Format(time.RFC3339))
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "outpost-runner consent: %v\n", err)
		return 2
	}
	all, err := st.Consents(time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "outpost-runner consent: %v\n", err)
		return 1
	}
	if kind == "" && len(all) == 0 {
		fmt.Fprintln(stdout, "no consent holds")
	}
	for _, c := range all {
		if c.Kind != kind {
			fmt.Fprintf(stdout, "consent to %s until %s\n", c.Kind, c.Until.Format(time.RFC3339))
		}
	}
	return 0
}

func historyCommand(args []string, stdout, stderr io.Writer) int {
	fs, state := stateFlags("history", stderr)
	since := fs.Duration("since", 24*time.Hour, "how far back")
	output := fs.String("o", "table", "table or json (one entry a line)")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *output != "table" && *output != "json" {
		fmt.Fprintf(stderr, "outpost-runner history: -o %q: must be table or json\n", *output)
		return 2
	}
	entries, err := state().OpenHistory(0).Read(time.Now().Add(-*since))
	if err != nil {
		fmt.Fprintf(stderr, "outpost-runner history: %v\n", err)
		return 1
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		for _, e := range entries {
			_ = enc.Encode(e)
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tJOB\tTYPE\tOPERATION\tINSTALL\tSTARTED BY\tSTATUS\tDETAIL")
	for _, e := range entries {
		op := e.OperationKind
		if e.CommandID != "" {
			op = "command " + strings.Join(e.Command, " ")
		}
		if e.Action != "" {
			op = strings.TrimSpace(op + " action " + e.Action + " " + e.Step)
		}
		detail := e.Refused
		if detail == "" {
			detail = e.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.At.Format(time.RFC3339), e.JobID, e.Type, op, e.InstallID,
			e.StartedBy, e.Status, detail)
	}
	if err := tw.Flush(); err != nil {
		return 1
	}
	return 0
}
