package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) runbooksCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "runbooks", Short: "List, run, approve and resume the vendor's runbooks on an install"}
	cmd.AddCommand(c.runbooksListCmd(), c.runbooksRunCmd(), c.runbooksRunsCmd(), c.runbooksShowCmd(),
		c.runbookRunCmd("approve", "Approve the gate a runbook run waits at"),
		c.runbookRunCmd("resume", "Resume a failed runbook run from its failed step (steps that succeeded are not run again)"))
	return cmd
}

func (c *cli) runbooksListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list INSTALL",
		Short: "List the runbooks of the install's config version, their steps and inputs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, inst, err := c.apiForInstall(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r, err := check(a.ListRunbooksWithResponse(cmd.Context(), inst.Id))
			return c.printAnswer(r, err, func() error {
				var rows [][]string
				for _, rb := range r.JSON200.Runbooks {
					var steps, inputs []string
					for _, s := range rb.Steps {
						steps = append(steps, s.Name+"("+string(s.Kind)+")")
					}
					for _, in := range rb.Inputs {
						inputs = append(inputs, in.Name)
					}
					rows = append(rows, []string{rb.Name, strings.Join(steps, " → "), strings.Join(inputs, ","), deref(rb.Description)})
				}
				return table(c.stdout, "NAME\tSTEPS\tINPUTS\tDESCRIPTION", rows)
			})
		},
	}
}

func (c *cli) runbooksRunCmd() *cobra.Command {
	var inputs []string
	var wait bool
	cmd := &cobra.Command{
		Use:   "run INSTALL RUNBOOK [--input NAME=VALUE]... [--wait]",
		Short: "Run a runbook on the install",
		Long: "Start a run of RUNBOOK with its inputs (each --input NAME=VALUE; numbers, true/false, JSON lists\n" +
			"and maps as text). --wait waits until it has finished or waits at an approval gate, and shows its\n" +
			"steps. Exit code 6 when the run failed or was cancelled (resume it with `runbooks resume`).",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			given, err := parseInputs(inputs, "")
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			a, inst, err := c.apiForInstall(ctx, args[0])
			if err != nil {
				return err
			}
			r, err := check(a.RunRunbookWithResponse(ctx, inst.Id, args[1], apiclient.RunRunbookRequest{Inputs: &given}))
			if err != nil {
				return err
			}
			return c.waitAndShowRunbookRun(ctx, a, *r.JSON201, wait)
		},
	}
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "an input of the runbook, NAME=VALUE (repeatable)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the run has finished or waits for approval")
	return cmd
}

// runbookRunCmd is approve or resume: a POST on a run.
func (c *cli) runbookRunCmd(verb, short string) *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use:   verb + " INSTALL RUN_ID [--wait]",
		Short: short,
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, inst, err := c.apiForInstall(ctx, args[0])
			if err != nil {
				return err
			}
			var run apiclient.RunbookRun
			if verb == "approve" {
				r, err := check(a.ApproveRunbookRunWithResponse(ctx, inst.Id, args[1]))
				if err != nil {
					return notFound(err, "no runbook run %s on install %s", args[1], args[0])
				}
				run = *r.JSON202
			} else {
				r, err := check(a.ResumeRunbookRunWithResponse(ctx, inst.Id, args[1]))
				if err != nil {
					return notFound(err, "no runbook run %s on install %s", args[1], args[0])
				}
				run = *r.JSON202
			}
			return c.waitAndShowRunbookRun(ctx, a, run, wait)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the run has finished or waits for approval")
	return cmd
}

// waitAndShowRunbookRun waits (if asked) and shows the run.
func (c *cli) waitAndShowRunbookRun(ctx context.Context, a *api, run apiclient.RunbookRun, wait bool) error {
	if wait {
		var err error
		if run, err = a.awaitRunbookRun(ctx, run); err != nil {
			return err
		}
	}
	return c.showRunbookRun(run)
}

// awaitRunbookRun reads the run again until it has finished or waits at a
// gate (a just-approved or resumed run first leaves where it was).
func (a *api) awaitRunbookRun(ctx context.Context, run apiclient.RunbookRun) (apiclient.RunbookRun, error) {
	left := run.Status == apiclient.RunbookRunStatusQueued
	for {
		if left && (run.FinishedAt != nil || run.Status == apiclient.RunbookRunStatusWaitingApproval) {
			return run, nil
		}
		if err := pause(ctx, 500*time.Millisecond); err != nil {
			return run, err
		}
		r, err := check(a.GetRunbookRunWithResponse(ctx, run.InstallId, run.Id))
		if err != nil {
			return run, err
		}
		left = left || r.JSON200.Status != run.Status || r.JSON200.Status == apiclient.RunbookRunStatusRunning
		run = *r.JSON200
	}
}

// showRunbookRun prints a run and its steps; a finished run that did not
// succeed is exit code 6.
func (c *cli) showRunbookRun(run apiclient.RunbookRun) error {
	if c.output == "json" {
		if err := c.printJSON(run); err != nil {
			return err
		}
	} else if err := c.printRunbookRun(run); err != nil {
		return err
	}
	if run.FinishedAt != nil && run.Status != apiclient.RunbookRunStatusSucceeded {
		return fail(exitOperation, "runbook run %s %s: %s", run.Id, run.Status, deref(run.Error))
	}
	return nil
}

func (c *cli) printRunbookRun(run apiclient.RunbookRun) error {
	fmt.Fprintf(c.stdout, "runbook run %s of %s (config version %d): %s\n", run.Id, run.Runbook, run.ConfigVersion, run.Status)
	for _, k := range sortedKeys(run.Inputs) {
		fmt.Fprintf(c.stdout, "  input %s = %s\n", k, run.Inputs[k])
	}
	if run.Status == apiclient.RunbookRunStatusWaitingApproval {
		fmt.Fprintf(c.stdout, "  waiting for approval: outpostctl runbooks approve %s %s\n", run.InstallId, run.Id)
	}
	if run.Steps == nil {
		return nil
	}
	var rows [][]string
	for _, s := range *run.Steps {
		follow := ""
		switch {
		case s.ActionRunId != nil:
			follow = "action run " + *s.ActionRunId
		case s.OperationId != nil:
			follow = "operation " + *s.OperationId
		case s.ApprovedBy != nil:
			follow = "approved by " + *s.ApprovedBy
		}
		rows = append(rows, []string{fmt.Sprint(s.Index), s.Name, string(s.Kind), deref(s.Target), string(s.Status), follow, deref(s.Error)})
	}
	return table(c.stdout, "#\tSTEP\tKIND\tTARGET\tSTATUS\tRUN\tERROR", rows)
}

func (c *cli) runbooksRunsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "runs INSTALL RUNBOOK",
		Short: "List the runs of an install's runbook, newest first",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, inst, err := c.apiForInstall(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r, err := check(a.ListRunbookRunsWithResponse(cmd.Context(), inst.Id, args[1], nil))
			return c.printAnswer(r, err, func() error {
				var rows [][]string
				for _, run := range r.JSON200.Runs {
					rows = append(rows, []string{run.Id, string(run.Status), deref(run.StartedBy),
						run.CreatedAt.Local().Format(time.DateTime), deref(run.Error)})
				}
				return table(c.stdout, "ID\tSTATUS\tSTARTED BY\tCREATED\tERROR", rows)
			})
		},
	}
}

func (c *cli) runbooksShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show INSTALL RUN_ID",
		Short: "Show a runbook run and its steps (follow a step with `outpostctl actions show` or `outpostctl operations show`)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, inst, err := c.apiForInstall(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r, err := check(a.GetRunbookRunWithResponse(cmd.Context(), inst.Id, args[1]))
			if err != nil {
				return notFound(err, "no runbook run %s on install %s", args[1], args[0])
			}
			return c.printAnswer(r, nil, func() error { return c.printRunbookRun(*r.JSON200) })
		},
	}
}
