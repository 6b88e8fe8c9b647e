package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) actionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "actions", Short: "List, run, show and cancel the vendor's actions on an install's runner"}
	cmd.AddCommand(c.actionsListCmd(), c.actionsRunCmd(), c.actionsRunsCmd(), c.actionsShowCmd(), c.actionsCancelCmd())
	return cmd
}

func (c *cli) actionsListCmd() *cobra.Command {
	return c.installCmd("list INSTALL", "List the actions of the install's config version, their triggers and inputs", 1,
		func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
			r, err := check(a.ListActionsWithResponse(ctx, inst.Id))
			return printRows(c, r, err, "NAME\tTRIGGERS\tINPUTS\tDESCRIPTION",
				func() []apiclient.ConfigAction { return r.JSON200.Actions },
				func(act apiclient.ConfigAction) []string {
					var triggers, inputs []string
					for _, t := range act.Triggers {
						triggers = append(triggers, string(t.Type))
					}
					for _, in := range act.Inputs {
						inputs = append(inputs, in.Name)
					}
					return []string{act.Name, strings.Join(triggers, ","), strings.Join(inputs, ","), deref(act.Description)}
				})
		})
}

func (c *cli) actionsRunCmd() *cobra.Command {
	return c.startRunCmd("run INSTALL ACTION [--input NAME=VALUE]... [--wait]", "Run an action on the install's runner",
		"Start a run of ACTION with its inputs (each --input NAME=VALUE; numbers, true/false, JSON lists\n"+
			"and maps as text). --wait waits until it has finished and shows its steps. Exit code 6 when the\n"+
			"run failed or was cancelled.",
		"action", "wait until the run has finished",
		func(ctx context.Context, a *api, installID, name string, given map[string]string, wait bool) error {
			r, err := check(a.RunActionWithResponse(ctx, installID, name, apiclient.RunActionRequest{Inputs: &given}))
			if err != nil {
				return err
			}
			return waitAndShow(ctx, *r.JSON201, wait, a.awaitActionRun, c.showActionRun)
		})
}

// awaitActionRun reads the run again until it has finished.
func (a *api) awaitActionRun(ctx context.Context, run apiclient.ActionRun) (apiclient.ActionRun, error) {
	return pollRun(ctx, run, func(ctx context.Context, run apiclient.ActionRun) (apiclient.ActionRun, error) {
		r, err := check(a.GetActionRunWithResponse(ctx, run.InstallId, run.Id))
		if err != nil {
			return run, err
		}
		return *r.JSON200, nil
	}, func(run apiclient.ActionRun) bool { return run.FinishedAt != nil })
}

// showActionRun prints a run and its steps; a finished run that did not
// succeed is exit code 6.
func (c *cli) showActionRun(run apiclient.ActionRun) error {
	var failed error
	if run.FinishedAt != nil && run.Status != apiclient.ActionRunStatusSucceeded {
		failed = fail(exitOperation, "action run %s %s: %s", run.Id, run.Status, deref(run.Error))
	}
	return showRun(c, run, c.printActionRun, failed)
}

func (c *cli) printActionRun(run apiclient.ActionRun) error {
	c.printRunInputs(fmt.Sprintf("action run %s of %s (config version %d, %s): %s", run.Id, run.Action, run.ConfigVersion, run.Trigger, run.Status),
		run.Inputs)
	if run.Steps == nil {
		return nil
	}
	var rows [][]string
	for _, s := range *run.Steps {
		exit := ""
		if s.ExitCode != nil {
			exit = fmt.Sprint(*s.ExitCode)
		}
		var outs []string
		for _, k := range sortedKeys(s.Outputs) {
			outs = append(outs, k+"="+s.Outputs[k])
		}
		rows = append(rows, []string{fmt.Sprint(s.Index), s.Name, string(s.Status), exit, deref(s.JobId), strings.Join(outs, " "), deref(s.Error)})
	}
	return table(c.stdout, "#\tSTEP\tSTATUS\tEXIT\tJOB\tOUTPUTS\tERROR", rows)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c *cli) actionsRunsCmd() *cobra.Command {
	return c.installCmd("runs INSTALL ACTION", "List the runs of an install's action, newest first", 2,
		func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
			r, err := check(a.ListActionRunsWithResponse(ctx, inst.Id, args[1], nil))
			return printRows(c, r, err, "ID\tSTATUS\tTRIGGER\tSTARTED BY\tCREATED\tERROR",
				func() []apiclient.ActionRun { return r.JSON200.Runs },
				func(run apiclient.ActionRun) []string {
					return []string{run.Id, string(run.Status), string(run.Trigger), deref(run.StartedBy),
						run.CreatedAt.Local().Format(time.DateTime), deref(run.Error)}
				})
		})
}

func (c *cli) actionsShowCmd() *cobra.Command {
	return c.installCmd("show INSTALL RUN_ID", "Show an action run and its steps (follow a step's log with `outpostctl logs JOB_ID`)", 2,
		func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
			r, err := check(a.GetActionRunWithResponse(ctx, inst.Id, args[1]))
			if err != nil {
				return noRun(err, "action", args)
			}
			return c.printAnswer(r, nil, func() error { return c.printActionRun(*r.JSON200) })
		})
}
