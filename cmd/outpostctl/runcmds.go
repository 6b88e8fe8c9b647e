package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

// The parts the commands on an install's action runs and runbook runs share.

// startRunCmd is `run INSTALL NAME [--input NAME=VALUE]... [--wait]`: start
// starts a run of the install's action or runbook (what names which) with
// the inputs given.
func (c *cli) startRunCmd(use, short, long, what, waitUsage string,
	start func(ctx context.Context, a *api, installID, name string, given map[string]string, wait bool) error) *cobra.Command {
	var inputs []string
	var given map[string]string
	var wait bool
	cmd := c.withInstall(&cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.ExactArgs(2),
		PreRunE: func(*cobra.Command, []string) (err error) {
			given, err = parseInputs(inputs, "")
			return err
		},
	}, func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
		return start(ctx, a, inst.Id, args[1], given, wait)
	})
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "an input of the "+what+", NAME=VALUE (repeatable)")
	cmd.Flags().BoolVar(&wait, "wait", false, waitUsage)
	return cmd
}

// noRun is the not-found error (exit code 4) of `KIND run RUN_ID on install
// INSTALL` for args INSTALL RUN_ID; any other error is itself.
func noRun(err error, kind string, args []string) error {
	return notFound(err, "no %s run %s on install %s", kind, args[1], args[0])
}

// pollRun reads a run again (get) every half second until done says it is.
func pollRun[R any](ctx context.Context, run R, get func(context.Context, R) (R, error), done func(R) bool) (R, error) {
	for !done(run) {
		if err := pause(ctx, 500*time.Millisecond); err != nil {
			return run, err
		}
		next, err := get(ctx, run)
		if err != nil {
			return run, err
		}
		run = next
	}
	return run, nil
}

// waitAndShow awaits the run if wait is set, then shows it.
func waitAndShow[R any](ctx context.Context, run R, wait bool, await func(context.Context, R) (R, error), show func(R) error) error {
	if wait {
		var err error
		if run, err = await(ctx, run); err != nil {
			return err
		}
	}
	return show(run)
}

// showRun prints a run (its JSON with -o json, else text's lines), then
// returns failed: exit code 6 for a finished run that did not succeed, or
// nil.
func showRun[R any](c *cli, run R, text func(R) error, failed error) error {
	if c.output == "json" {
		if err := c.printJSON(run); err != nil {
			return err
		}
	} else if err := text(run); err != nil {
		return err
	}
	return failed
}

// printRunInputs prints a run's first line and its inputs, by name.
func (c *cli) printRunInputs(head string, inputs map[string]string) {
	fmt.Fprintln(c.stdout, head)
	for _, k := range sortedKeys(inputs) {
		fmt.Fprintf(c.stdout, "  input %s = %s\n", k, inputs[k])
	}
}
