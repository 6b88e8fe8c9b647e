package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

// waitFlags adds the flags of a command that follows an operation: --wait
// (when wait is not nil), --timeout and --cancel-on-interrupt.
func (c *cli) waitFlags(cmd *cobra.Command, wait *bool, timeout *time.Duration) {
	f := cmd.Flags()
	if wait != nil {
		f.BoolVar(wait, "wait", false, "follow the operation until it finishes (Ctrl-C detaches; it goes on)")
	}
	f.DurationVar(timeout, "timeout", 0, "stop following after this long (the operation goes on; 0: no limit)")
	f.BoolVar(&c.cancelOnInterrupt, "cancel-on-interrupt", false, "Ctrl-C while following cancels the operation instead of detaching")
}

// withTimeout is ctx ending after d (none when d is 0).
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

// follow shows the operation until it finishes: a live tree of its steps
// on a terminal (tui.go), else a line per change of a status. Ctrl-C
// detaches (exit 130), or with --cancel-on-interrupt cancels it.
func (c *cli) follow(ctx context.Context, a *api, inst apiclient.Install, op apiclient.Operation) error {
	if out, ok := c.stdout.(*os.File); ok && c.output != "json" && term.IsTerminal(out.Fd()) {
		return c.followTUI(ctx, a, inst, op)
	}
	return c.followPlain(ctx, a, inst, op)
}

// followPlain prints a line per status change; an interrupt (SIGINT)
// detaches or cancels.
func (c *cli) followPlain(ctx context.Context, a *api, inst apiclient.Install, op apiclient.Operation) error {
	progress := c.progressOut()
	start, seen := time.Now(), map[string]string{}
	var last snapshot
	show := func(s snapshot) { last = s; printChanges(progress, inst.Name, s, seen) }
	ictx, stop := signal.NotifyContext(ctx, os.Interrupt)
	err := newWatcher(a, inst, op, false).run(ictx, show)
	interrupted := ictx.Err() != nil && ctx.Err() == nil
	stop()
	if interrupted {
		if !c.cancelOnInterrupt {
			return detached(inst, op)
		}
		if err := c.cancelOp(ctx, a, inst, op); err != nil {
			return err
		}
		fmt.Fprintf(c.stderr, "cancelling %s %s…\n", op.Kind, op.Id)
		err = newWatcher(a, inst, op, false).run(ctx, show)
	}
	return c.ended(ctx, err, inst, op, last, time.Since(start))
}

// ended is how following ended: the operation finished (its summary),
// the wait timed out, or a read failed.
func (c *cli) ended(ctx context.Context, err error, inst apiclient.Install, op apiclient.Operation, last snapshot, took time.Duration) error {
	switch {
	case last.op.FinishedAt != nil:
		return c.finished(last, took)
	case ctx.Err() != nil:
		return fail(exitOperation, "stopped waiting for %s %s; it goes on: `outpostctl wait %s %s` follows it again",
			op.Kind, op.Id, inst.Name, op.Id)
	}
	return err
}

// detached is the error of a Ctrl-C that leaves the operation running.
func detached(inst apiclient.Install, op apiclient.Operation) error {
	return fail(exitDetached, "detached from %s %s; it goes on: `outpostctl wait %s %s` follows it again, `outpostctl cancel %s %s` cancels it",
		op.Kind, op.Id, inst.Name, op.Id, inst.Name, op.Id)
}

// cancelOp asks the API to cancel the operation; one that finished
// meanwhile (409) is no error: following it shows how it ended.
func (c *cli) cancelOp(ctx context.Context, a *api, inst apiclient.Install, op apiclient.Operation) error {
	_, err := check(a.CancelOperationWithResponse(ctx, inst.Id, op.Id))
	if e, ok := errors.AsType[*apiError](err); ok && e.Status == http.StatusConflict {
		return nil
	}
	return err
}

// printChanges prints a line for the operation's and each step's status
// that differs from seen, and records it.
func printChanges(w io.Writer, install string, s snapshot, seen map[string]string) {
	now, op := time.Now().Format("15:04:05"), s.op
	if seen["\x00op"] != op.Status {
		seen["\x00op"] = op.Status
		fmt.Fprintf(w, "%s %s %s: %s\n", now, op.Kind, op.Id, op.Status)
	}
	for _, st := range s.steps {
		if seen[st.Name] == st.Status {
			continue
		}
		seen[st.Name] = st.Status
		line := fmt.Sprintf("%s   %s: %s", now, st.Name, st.Status)
		if st.Error != "" {
			line += " (" + st.Error + ")"
		}
		if st.Status == "waiting_approval" {
			line += fmt.Sprintf(" — %s", approveHint(install, st.Name))
		}
		if st.Status == "left_behind" {
			line += " — " + leftBehind(st.LeftBehind)
		}
		fmt.Fprintln(w, line)
	}
}

// approveHint names the commands that approve or deny a step's plan.
func approveHint(install, step string) string {
	return fmt.Sprintf("`outpostctl approve %s %s` or `outpostctl deny %s %s`", install, step, install, step)
}

// summary is the line that ends following: the outcome, how long it took
// and how many steps ended how.
func summary(s snapshot, took time.Duration) string {
	counts, order := map[string]int{}, []string{}
	for _, st := range s.steps {
		if counts[st.Status] == 0 {
			order = append(order, st.Status)
		}
		counts[st.Status]++
	}
	var parts []string
	for _, status := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[status], status))
	}
	line := fmt.Sprintf("%s %s %s in %s", s.op.Kind, s.op.Id, s.op.Status, took.Round(time.Second))
	if len(parts) > 0 {
		noun := "steps"
		if len(s.steps) == 1 {
			noun = "step"
		}
		line += fmt.Sprintf(" (%d %s: %s)", len(s.steps), noun, strings.Join(parts, ", "))
	}
	for _, st := range s.steps {
		if st.Status == "left_behind" {
			line += fmt.Sprintf("\n%s could not be destroyed (%s): %s", st.Name, st.Error, leftBehind(st.LeftBehind))
		}
	}
	return line
}

// leftBehind says what a step a deprovision with forget could not destroy
// left behind.
func leftBehind(left []string) string { return "left behind: " + leftList(left) }

// leftList lists what a step left behind.
func leftList(left []string) string {
	if len(left) == 0 {
		return "nothing recorded in its state"
	}
	return strings.Join(left, ", ")
}

// finished prints the summary (-o json: the operation) and fails unless
// the operation succeeded.
func (c *cli) finished(s snapshot, took time.Duration) error {
	if c.output == "json" {
		if err := c.printBody(s.body); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(c.stdout, summary(s, took))
	}
	if op := s.op; op.Status != "succeeded" {
		msg := ""
		if op.Error != nil && *op.Error != "" {
			msg = ": " + strings.ReplaceAll(*op.Error, "\n", "; ")
		}
		return fail(exitOperation, "%s %s %s%s", op.Kind, op.Id, op.Status, msg)
	}
	return nil
}
