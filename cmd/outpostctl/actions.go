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
	return &cobra.Command{
		Use:   "list INSTALL",
		Short: "List the actions of the install's config version, their triggers and inputs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, inst, err := c.apiForInstall(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r, err := check(a.ListActionsWithResponse(cmd.Context(), inst.Id))
			return c.printAnswer(r, err, func() error {
				var rows [][]string
				for _, act := range r.JSON200.Actions {
					var triggers, inputs []string
					for _, t := range act.Triggers {
						triggers = append(triggers, string(t.Type))
					}
					for _, in := range act.Inputs {
						inputs = append(inputs, in.Name)
					}
					rows = append(rows, []string{act.Name, strings.Join(triggers, ","), strings.Join(inputs, ","), deref(act.Description)})
				}
				return table(c.stdout, "NAME\tTRIGGERS\tINPUTS\tDESCRIPTION", rows)
			})
		},
	}
}

func (c *cli) actionsRunCmd() *cobra.Command {
	var inputs []string
	var wait bool
	cmd := &cobra.Command{
		Use:   "run INSTALL ACTION [--input NAME=VALUE]... [--wait]",
		Short: "Run an action on the install's runner",
		Long: "Start a run of ACTION with its inputs (each --input NAME=VALUE; numbers, true/false, JSON lists\n" +
			"and maps as text). --wait waits until it has finished and shows its steps. Exit code 6 when the\n" +
			"run failed or was cancelled.",
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
			r, err := check(a.RunActionWithResponse(ctx, inst.Id, args[1], apiclient.RunActionRequest{Inputs: &given}))
			if err != nil {
				return err
			}
			run := *r.JSON201
			if wait {
				if run, err = a.awaitActionRun(ctx, run); err != nil {
					return err
				}
			}
			return c.showActionRun(run)
		},
	}
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "an input of the action, NAME=VALUE (repeatable)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the run has finished")
	return cmd
}

// awaitActionRun reads the run again until it has finished.
func (a *api) awaitActionRun(ctx context.Context, run apiclient.ActionRun) (apiclient.ActionRun, error) {
	for run.FinishedAt == nil {
		if err := pause(ctx, 500*time.Millisecond); err != nil {
			return run, err
		}
		r, err := check(a.GetActionRunWithResponse(ctx, run.InstallId, run.Id))
		if err != nil {
			return run, err
		}
		run = *r.JSON200
	}
	return run, nil
}

// showActionRun prints a run and its steps; a finished run that did not
// succeed is exit code 6.
func (c *cli) showActionRun(run apiclient.ActionRun) error {
	if c.output == "json" {
		if err := c.printJSON(run); err != nil {
			return err
		}
	} else if err := c.printActionRun(run); err != nil {
		return err
	}
	if run.FinishedAt != nil && run.Status != apiclient.ActionRunStatusSucceeded {
		return fail(exitOperation, "action run %s %s: %s", run.Id, run.Status, deref(run.Error))
	}
	return nil
}

func (c *cli) printActionRun(run apiclient.ActionRun) error {
	fmt.Fprintf(c.stdout, "action run %s of %s (config version %d, %s): %s\n", run.Id, run.Action, run.ConfigVersion, run.Trigger, run.Status)
	for _, k := range sortedKeys(run.Inputs) {
		fmt.Fprintf(c.stdout, "  input %s = %s\n", k, run.Inputs[k])
	}
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
	return &cobra.Command{
		Use:   "runs INSTALL ACTION",
		Short: "List the runs of an install's action, newest first",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, inst, err := c.apiForInstall(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r, err := check(a.ListActionRunsWithResponse(cmd.Context(), inst.Id, args[1], nil))
			return c.printAnswer(r, err, func() error {
				var rows [][]string
				for _, run := range r.JSON200.Runs {
					rows = append(rows, []string{run.Id, string(run.Status), string(run.Trigger), deref(run.StartedBy),
						run.CreatedAt.Local().Format(time.DateTime), deref(run.Error)})
				}
				return table(c.stdout, "ID\tSTATUS\tTRIGGER\tSTARTED BY\tCREATED\tERROR", rows)
			})
		},
	}
}

func (c *cli) actionsShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show INSTALL RUN_ID",
		Short: "Show an action run and its steps (follow a step's log with `outpostctl logs JOB_ID`)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, inst, err := c.apiForInstall(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r, err := check(a.GetActionRunWithResponse(cmd.Context(), inst.Id, args[1]))
			if err != nil {
				return notFound(err, "no action run %s on install %s", args[1], args[0])
			}
			return c.printAnswer(r, nil, func() error { return c.printActionRun(*r.JSON200) })
		},
	}
}
