package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) actionsCancelCmd() *cobra.Command {
	var wait bool
	cmd := c.installCmd("cancel INSTALL RUN_ID [--wait]", "Cancel an action run", 2,
		func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
			r, err := check(a.CancelActionRunWithResponse(ctx, inst.Id, args[1]))
			if err != nil {
				return noRun(err, "action", args)
			}
			if wait {
				return waitAndShow(ctx, *r.JSON202, wait, a.awaitActionRun, c.showActionRun)
			}
			return c.printAnswer(r, nil, func() error {
				fmt.Fprintf(c.stdout, "cancelling action run %s of %s on install %s: `outpostctl actions show %s %s` shows its end\n",
					args[1], r.JSON202.Action, inst.Name, inst.Name, args[1])
				return nil
			})
		})
	cmd.Long = "Ask the API to cancel the run: its running step's process is stopped (SIGTERM, then SIGKILL), the\n" +
		"steps after it are skipped and the run ends cancelled. --wait waits for that end and shows the run\n" +
		"(exit code 6, as for any run that did not succeed). One that has finished is a conflict (exit code 5)."
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the run has ended")
	return cmd
}
