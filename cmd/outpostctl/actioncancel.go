package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (c *cli) actionsCancelCmd() *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use:   "cancel INSTALL RUN_ID [--wait]",
		Short: "Cancel an action run",
		Long: "Ask the API to cancel the run: its running step's process is stopped (SIGTERM, then SIGKILL), the\n" +
			"steps after it are skipped and the run ends cancelled. --wait waits for that end and shows the run\n" +
			"(exit code 6, as for any run that did not succeed). One that has finished is a conflict (exit code 5).",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, inst, err := c.apiForInstall(ctx, args[0])
			if err != nil {
				return err
			}
			r, err := check(a.CancelActionRunWithResponse(ctx, inst.Id, args[1]))
			if err != nil {
				return notFound(err, "no action run %s on install %s", args[1], args[0])
			}
			if wait {
				run, err := a.awaitActionRun(ctx, *r.JSON202)
				if err != nil {
					return err
				}
				return c.showActionRun(run)
			}
			return c.printAnswer(r, nil, func() error {
				fmt.Fprintf(c.stdout, "cancelling action run %s of %s on install %s: `outpostctl actions show %s %s` shows its end\n",
					args[1], r.JSON202.Action, inst.Name, inst.Name, args[1])
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the run has ended")
	return cmd
}
