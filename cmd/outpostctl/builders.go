package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

// How the commands that call the API are built: cmd gives the use, help
// and arguments; do what the command does, with the chosen context's client.

// withAPI makes cmd run do with the chosen context's client. Its PreRunE
// (usage checks) runs after cobra's own checks of required flags and flag
// groups, which cobra makes after PreRunE: the missing flag is named first.
func (c *cli) withAPI(cmd *cobra.Command, do func(ctx context.Context, a *api, args []string) error) *cobra.Command {
	if pre := cmd.PreRunE; pre != nil {
		cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
			if err := cmd.ValidateRequiredFlags(); err != nil {
				return err
			}
			if err := cmd.ValidateFlagGroups(); err != nil {
				return err
			}
			return pre(cmd, args)
		}
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		a, err := c.api()
		if err != nil {
			return err
		}
		return do(cmd.Context(), a, args)
	}
	return cmd
}

// withInstall makes cmd, whose first argument is an install (ID or name),
// run do with the client and that install.
func (c *cli) withInstall(cmd *cobra.Command, do func(ctx context.Context, a *api, inst apiclient.Install, args []string) error) *cobra.Command {
	return c.withAPI(cmd, func(ctx context.Context, a *api, args []string) error {
		inst, err := a.install(ctx, args[0])
		if err != nil {
			return err
		}
		return do(ctx, a, inst, args)
	})
}

// installCmd is a command whose first of nargs arguments is an install.
func (c *cli) installCmd(use, short string, nargs int,
	do func(ctx context.Context, a *api, inst apiclient.Install, args []string) error) *cobra.Command {
	return c.withInstall(&cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(nargs)}, do)
}

// withApp makes cmd, given the required --app flag, run do with the client
// and the app it names.
func (c *cli) withApp(cmd *cobra.Command, do func(ctx context.Context, a *api, app apiclient.App, args []string) error) *cobra.Command {
	var ref string
	appFlag(cmd, &ref)
	return c.withAPI(cmd, func(ctx context.Context, a *api, args []string) error {
		app, err := a.app(ctx, ref)
		if err != nil {
			return err
		}
		return do(ctx, a, app, args)
	})
}

// printRows prints an answer: its JSON body with -o json, else a table of
// a row per item (items is read only when the answer came).
func printRows[T any](c *cli, r answer, err error, header string, items func() []T, row func(T) []string) error {
	return c.printAnswer(r, err, func() error {
		var rows [][]string
		for _, it := range items() {
			rows = append(rows, row(it))
		}
		return table(c.stdout, header, rows)
	})
}
