package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

// waitCmd re-attaches to an operation: the install's latest, or the one
// named.
func (c *cli) waitCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait INSTALL [OPERATION]",
		Short: "Follow an install's operation (its latest, or the one named) until it finishes",
		Long: "Follow an operation as provision --wait does (a live tree on a terminal, else a line per status\n" +
			"change), then its summary: exit code 6 unless it succeeded. One that has finished shows its summary.",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, inst, op, err := c.installOperation(cmd.Context(), args)
			if err != nil {
				return err
			}
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			return c.follow(ctx, a, inst, op)
		},
	}
	c.waitFlags(cmd, nil, &timeout)
	return cmd
}

// cancelCmd cancels an operation: the install's latest, or the one named.
func (c *cli) cancelCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cancel INSTALL [OPERATION]",
		Short: "Cancel an install's operation (its latest, or the one named)",
		Long: "Ask the API to cancel the operation: nothing more starts and the running steps' jobs are cancelled;\n" +
			"it then ends cancelled (`outpostctl wait` follows it to the end). One that has finished is a\n" +
			"conflict (exit code 5).",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, inst, op, err := c.installOperation(cmd.Context(), args)
			if err != nil {
				return err
			}
			r, err := check(a.CancelOperationWithResponse(cmd.Context(), inst.Id, op.Id))
			return c.printAnswer(r, err, func() error {
				fmt.Fprintf(c.stdout, "cancelling %s %s on install %s: `outpostctl wait %s %s` follows it to its end\n",
					op.Kind, op.Id, inst.Name, inst.Name, op.Id)
				return nil
			})
		},
	}
}

// installOperation reads args' install and operation: args[1], or else
// the install's latest.
func (c *cli) installOperation(ctx context.Context, args []string) (*api, apiclient.Install, apiclient.Operation, error) {
	a, err := c.api()
	if err != nil {
		return nil, apiclient.Install{}, apiclient.Operation{}, err
	}
	inst, err := a.install(ctx, args[0])
	if err != nil {
		return nil, inst, apiclient.Operation{}, err
	}
	if len(args) > 1 {
		r, err := check(a.GetOperationWithResponse(ctx, inst.Id, args[1], &apiclient.GetOperationParams{}))
		if err != nil {
			return nil, inst, apiclient.Operation{}, err
		}
		return a, inst, *r.JSON200, nil
	}
	limit := 1
	r, err := check(a.ListOperationsWithResponse(ctx, inst.Id, &apiclient.ListOperationsParams{Limit: &limit}))
	if err != nil {
		return nil, inst, apiclient.Operation{}, err
	}
	if len(r.JSON200.Operations) == 0 {
		return nil, inst, apiclient.Operation{}, fail(exitNotFound, "install %s has no operation yet (`outpostctl provision %s` starts one)", inst.Name, inst.Name)
	}
	return a, inst, r.JSON200.Operations[0], nil
}
