package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/outpost-dev/outpost/apiclient"
)

// approveCmd is approve (or, with approve false, deny).
func (c *cli) approveCmd(approve bool) *cobra.Command {
	verb, effect := "approve", "the step applies its plan and the operation goes on"
	if !approve {
		verb, effect = "deny", "the operation ends: nothing more starts, steps already running finish"
	}
	var opRef string
	var yes, wait bool
	var timeout time.Duration
	cmd := c.withInstall(&cobra.Command{
		Use:   verb + " INSTALL [STEP] [--operation OP] [--yes]",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " the plan of a step waiting for approval (approval mode prompt)",
		Long: "Find the step waiting for approval in the operation (default: the install's latest) — STEP names\n" +
			"one when several wait —, print its plan, ask to confirm (y/N) and " + verb + " it: " + effect + ".\n" +
			"Without a terminal, --yes is needed. A step that does not wait (any more) is exit code 5; with --wait,\n" +
			"a step of a running operation that does not wait yet is waited for (up to --timeout).",
		Args: cobra.RangeArgs(1, 2),
	}, func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
		op, _, err := a.operation(ctx, inst, opRef)
		if err != nil {
			return err
		}
		name := ""
		if len(args) == 2 {
			name = args[1]
		}
		if wait {
			var cancel context.CancelFunc
			ctx, cancel = withTimeout(ctx, timeout)
			defer cancel()
		}
		step, op, err := a.awaitStep(ctx, op, inst, name, verb, wait)
		if err != nil {
			return err
		}
		if err := c.confirm(verb, op, step, yes); err != nil {
			return err
		}
		return c.decide(ctx, a, inst, op, step.name, approve)
	})
	cmd.Flags().StringVar(&opRef, "operation", "", "the operation (default: the install's latest)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, verb+" without asking")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the step to wait for approval while the operation runs")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "with --wait, how long to wait for it")
	return cmd
}

// awaitStep is waitingStep; with wait, it reads the operation again each
// second while it runs and no such step waits yet.
func (a *api) awaitStep(ctx context.Context, op apiclient.Operation, inst apiclient.Install, name, verb string, wait bool) (stepRow, apiclient.Operation, error) {
	for {
		step, err := waitingStep(op, inst, name, verb)
		// A step that does not wait yet, or an operation that has no
		// steps yet (it has just started), may still come to wait.
		again := exitCode(err) == exitConflict || exitCode(err) == exitNotFound && (op.Steps == nil || len(*op.Steps) == 0)
		if err == nil || !wait || op.FinishedAt != nil || !again {
			return step, op, err
		}
		select {
		case <-ctx.Done():
			return step, op, fail(exitConflict, "%v (waited until --timeout)", err)
		case <-time.After(time.Second):
		}
		if op, _, err = a.operation(ctx, inst, op.Id); err != nil {
			return step, op, err
		}
	}
}

// waitingStep is the step named (or else the only one) waiting for approval.
func waitingStep(op apiclient.Operation, inst apiclient.Install, name, verb string) (stepRow, error) {
	var waiting []stepRow
	var names, waitingNames []string
	for _, s := range stepRows(op) {
		names = append(names, s.name)
		if name != "" && s.name == name && s.status != "waiting_approval" {
			return s, fail(exitConflict, "step %s of %s %s is %s, not waiting for approval", name, opTitle(op), op.Id, s.status)
		}
		if s.status == "waiting_approval" && (name == "" || s.name == name) {
			waiting, waitingNames = append(waiting, s), append(waitingNames, s.name)
		}
	}
	switch {
	case len(waiting) == 1:
		return waiting[0], nil
	case name != "":
		return stepRow{}, fail(exitNotFound, "%s %s has no step %q (steps: %s)", opTitle(op), op.Id, name, strings.Join(names, ", "))
	case len(waiting) == 0:
		return stepRow{}, fail(exitConflict, "no step of %s %s (%s) waits for approval (`outpostctl operations show %s %s`)",
			opTitle(op), op.Id, op.Status, inst.Name, op.Id)
	}
	return stepRow{}, fail(exitUsage, "%d steps of %s %s wait for approval (%s): name one, e.g. `outpostctl %s %s %s`",
		len(waiting), opTitle(op), op.Id, strings.Join(waitingNames, ", "), verb, inst.Name, waitingNames[0])
}

// confirm prints the step's plan (on stderr with -o json) and, unless yes,
// asks on the terminal.
func (c *cli) confirm(verb string, op apiclient.Operation, step stepRow, yes bool) error {
	w := c.stdout
	if c.output == "json" {
		w = c.stderr
	}
	fmt.Fprintf(w, "plan of step %s (%s %s):\n%s\n", step.name, opTitle(op), op.Id, strings.TrimRight(step.plan, "\n"))
	if step.policySummary != "" {
		fmt.Fprintln(w, step.policySummary)
	}
	for _, l := range step.policies {
		fmt.Fprintln(w, l)
	}
	if yes {
		return nil
	}
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return fail(exitUsage, "standard input is not a terminal: pass --yes to %s step %s without a prompt", verb, step.name)
	}
	fmt.Fprintf(c.stderr, "%s step %s? [y/N] ", strings.ToUpper(verb[:1])+verb[1:], step.name)
	answer, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the answer: %w", err)
	}
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return fail(exitUsage, "step %s left waiting: nothing changed", step.name)
	}
	return nil
}

// decide sends the decision; a 409 (the step no longer waits) is one line.
func (c *cli) decide(ctx context.Context, a *api, inst apiclient.Install, op apiclient.Operation, step string, approve bool) error {
	var r answer
	var err error
	if approve {
		r, err = check(a.ApproveStepWithResponse(ctx, inst.Id, op.Id, step))
	} else {
		r, err = check(a.DenyStepWithResponse(ctx, inst.Id, op.Id, step))
	}
	if e, ok := errors.AsType[*apiError](err); ok && e.Status == http.StatusConflict {
		var body apiclient.Error
		_ = json.Unmarshal(e.Body, &body)
		return fail(exitConflict, "%s (`outpostctl operations show %s %s`)", body.Message, inst.Name, op.Id)
	}
	return c.printAnswer(r, err, func() error {
		if approve {
			fmt.Fprintf(c.stdout, "approved step %s of %s %s; it goes on: `outpostctl operations show %s %s`\n", step, opTitle(op), op.Id, inst.Name, op.Id)
		} else {
			fmt.Fprintf(c.stdout, "denied step %s of %s %s; the operation ends\n", step, opTitle(op), op.Id)
		}
		return nil
	})
}

func (c *cli) installsApprovalModeCmd() *cobra.Command {
	return c.withInstall(&cobra.Command{
		Use:   "approval-mode INSTALL MODE",
		Short: "Set how the install's plans are approved: approve-all, or prompt (each plan waits for `outpostctl approve`)",
		Args:  cobra.ExactArgs(2),
		PreRunE: func(_ *cobra.Command, args []string) error {
			if !apiclient.ApprovalModeApprovalMode(args[1]).Valid() {
				return fail(exitUsage, "MODE %q: want %s or %s", args[1], apiclient.ApproveAll, apiclient.Prompt)
			}
			return nil
		},
	}, func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
		mode := apiclient.ApprovalModeApprovalMode(args[1])
		r, err := check(a.SetApprovalModeWithResponse(ctx, inst.Id, apiclient.ApprovalMode{ApprovalMode: mode}))
		return c.printAnswer(r, err, func() error {
			fmt.Fprintf(c.stdout, "install %s: approval mode %s (for the operations started from now on)\n", inst.Name, mode)
			return nil
		})
	})
}
