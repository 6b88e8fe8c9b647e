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
	cmd := &cobra.Command{Use: "runbooks", Short: "List, run, approve, resume and cancel the vendor's runbooks on an install"}
	cmd.AddCommand(c.runbooksListCmd(), c.runbooksRunCmd(), c.runbooksRunsCmd(), c.runbooksShowCmd(),
		c.runbookRunCmd("approve", "Approve the gate a runbook run waits at"),
		c.runbookRunCmd("resume", "Resume a failed or cancelled runbook run from its failed step (steps that succeeded are not run again)"),
		c.runbookRunCmd("cancel", "Cancel a runbook run: its running step's action run or operation is cancelled, a gate stops waiting"))
	return cmd
}

func (c *cli) runbooksListCmd() *cobra.Command {
	return c.installCmd("list INSTALL", "List the runbooks of the install's config version, their steps and inputs", 1,
		func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
			r, err := check(a.ListRunbooksWithResponse(ctx, inst.Id))
			return printRows(c, r, err, "NAME\tSTEPS\tINPUTS\tDESCRIPTION",
				func() []apiclient.ConfigRunbook { return r.JSON200.Runbooks },
				func(rb apiclient.ConfigRunbook) []string {
					var steps, inputs []string
					for _, s := range rb.Steps {
						steps = append(steps, s.Name+"("+string(s.Kind)+")")
					}
					for _, in := range rb.Inputs {
						inputs = append(inputs, in.Name)
					}
					return []string{rb.Name, strings.Join(steps, " → "), strings.Join(inputs, ","), deref(rb.Description)}
				})
		})
}

func (c *cli) runbooksRunCmd() *cobra.Command {
	return c.startRunCmd("run INSTALL RUNBOOK [--input NAME=VALUE]... [--wait]", "Run a runbook on the install",
		"Start a run of RUNBOOK with its inputs (each --input NAME=VALUE; numbers, true/false, JSON lists\n"+
			"and maps as text). --wait waits until it has finished or waits at an approval gate, and shows its\n"+
			"steps. Exit code 6 when the run failed or was cancelled (resume it with `runbooks resume`).",
		"runbook", "wait until the run has finished or waits for approval",
		func(ctx context.Context, a *api, installID, name string, given map[string]string, wait bool) error {
			r, err := check(a.RunRunbookWithResponse(ctx, installID, name, apiclient.RunRunbookRequest{Inputs: &given}))
			if err != nil {
				return err
			}
			return waitAndShow(ctx, *r.JSON201, wait, a.awaitRunbookRun, c.showRunbookRun)
		})
}

// runbookRunCmd is approve, resume or cancel: a POST on a run.
func (c *cli) runbookRunCmd(verb, short string) *cobra.Command {
	var wait bool
	cmd := c.installCmd(verb+" INSTALL RUN_ID [--wait]", short, 2,
		func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
			run, err := a.postRunbookRun(ctx, verb, inst.Id, args[1])
			if err != nil {
				return noRun(err, "runbook", args)
			}
			return waitAndShow(ctx, run, wait, a.awaitRunbookRun, c.showRunbookRun)
		})
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the run has finished or waits for approval")
	return cmd
}

// postRunbookRun approves, resumes or cancels a run.
func (a *api) postRunbookRun(ctx context.Context, verb, installID, runID string) (apiclient.RunbookRun, error) {
	var run *apiclient.RunbookRun
	var err error
	switch verb {
	case "approve":
		var r *apiclient.ApproveRunbookRunResponse
		if r, err = check(a.ApproveRunbookRunWithResponse(ctx, installID, runID)); err == nil {
			run = r.JSON202
		}
	case "resume":
		var r *apiclient.ResumeRunbookRunResponse
		if r, err = check(a.ResumeRunbookRunWithResponse(ctx, installID, runID)); err == nil {
			run = r.JSON202
		}
	default:
		var r *apiclient.CancelRunbookRunResponse
		if r, err = check(a.CancelRunbookRunWithResponse(ctx, installID, runID)); err == nil {
			run = r.JSON202
		}
	}
	if err != nil {
		return apiclient.RunbookRun{}, err
	}
	return *run, nil
}

// awaitRunbookRun reads the run again until it has finished or waits at a
// gate (a just-approved or resumed run first leaves where it was).
func (a *api) awaitRunbookRun(ctx context.Context, run apiclient.RunbookRun) (apiclient.RunbookRun, error) {
	left, last := run.Status == apiclient.RunbookRunStatusQueued, run.Status
	return pollRun(ctx, run, func(ctx context.Context, run apiclient.RunbookRun) (apiclient.RunbookRun, error) {
		r, err := check(a.GetRunbookRunWithResponse(ctx, run.InstallId, run.Id))
		if err != nil {
			return run, err
		}
		left = left || r.JSON200.Status != last || r.JSON200.Status == apiclient.RunbookRunStatusRunning
		last = r.JSON200.Status
		return *r.JSON200, nil
	}, func(run apiclient.RunbookRun) bool {
		return left && (run.FinishedAt != nil || run.Status == apiclient.RunbookRunStatusWaitingApproval)
	})
}

// showRunbookRun prints a run and its steps; a finished run that did not
// succeed is exit code 6.
func (c *cli) showRunbookRun(run apiclient.RunbookRun) error {
	var failed error
	if run.FinishedAt != nil && run.Status != apiclient.RunbookRunStatusSucceeded {
		failed = fail(exitOperation, "runbook run %s %s: %s", run.Id, run.Status, deref(run.Error))
	}
	return showRun(c, run, c.printRunbookRun, failed)
}

func (c *cli) printRunbookRun(run apiclient.RunbookRun) error {
	c.printRunInputs(fmt.Sprintf("runbook run %s of %s (config version %d): %s", run.Id, run.Runbook, run.ConfigVersion, run.Status), run.Inputs)
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
	return c.installCmd("runs INSTALL RUNBOOK", "List the runs of an install's runbook, newest first", 2,
		func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
			r, err := check(a.ListRunbookRunsWithResponse(ctx, inst.Id, args[1], nil))
			return printRows(c, r, err, "ID\tSTATUS\tSTARTED BY\tCREATED\tERROR",
				func() []apiclient.RunbookRun { return r.JSON200.Runs },
				func(run apiclient.RunbookRun) []string {
					return []string{run.Id, string(run.Status), deref(run.StartedBy), run.CreatedAt.Local().Format(time.DateTime), deref(run.Error)}
				})
		})
}

func (c *cli) runbooksShowCmd() *cobra.Command {
	return c.installCmd("show INSTALL RUN_ID",
		"Show a runbook run and its steps (follow a step with `outpostctl actions show` or `outpostctl operations show`)", 2,
		func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
			r, err := check(a.GetRunbookRunWithResponse(ctx, inst.Id, args[1]))
			if err != nil {
				return noRun(err, "runbook", args)
			}
			return c.printAnswer(r, nil, func() error { return c.printRunbookRun(*r.JSON200) })
		})
}
