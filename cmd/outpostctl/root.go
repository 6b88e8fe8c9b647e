package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/internal/cliconfig"
)

// cli is what every command shares: the global flags and where to write.
type cli struct {
	stdout, stderr io.Writer
	context        string            // --context: a context name other than the current one
	output         string            // -o: text or json
	used           cliconfig.Context // the context of the API called, once one is
	// cancelOnInterrupt: Ctrl-C while following an operation cancels it
	// (--cancel-on-interrupt) instead of detaching.
	cancelOnInterrupt bool
}

func newRoot(stdout, stderr io.Writer) (*cobra.Command, *cli) {
	c := &cli{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "outpostctl",
		Short: "The vendor's CLI of Outpost: apps, their configs, installs and their operations",
		Long: "outpostctl drives an Outpost org through its control API (/v1).\n\n" +
			"It talks to the API of the current context (`outpostctl context list`); `outpost dev` writes a\n" +
			"context named dev and makes it current. OUTPOST_CONTEXT or --context chooses another.\n\n" +
			exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if c.output != "text" && c.output != "json" {
				return fail(exitUsage, "-o %q: want text or json", c.output)
			}
			return nil
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fail(exitUsage, "%w (see %s --help)", err, cmd.CommandPath())
	})
	f := root.PersistentFlags()
	f.StringVar(&c.context, "context", "", "the context to use (default: $OUTPOST_CONTEXT, then the current one)")
	f.StringVarP(&c.output, "output", "o", "text", "output format: text or json (the API's objects)")
	root.AddCommand(c.contextCmd(), c.appsCmd(), c.installsCmd(), c.inputsCmd(),
		c.operationCmd(opProvision), c.operationCmd(opDeprovision), c.operationCmd(opReprovision), c.operationCmd(opDeploy),
		c.operationCmd(opTeardown), c.operationCmd(opUpdateInputs), c.waitCmd(), c.cancelCmd(), c.operationsCmd(),
		c.approveCmd(true), c.approveCmd(false), c.jobsCmd(), c.logsCmd(), c.execCmd(), c.actionsCmd(), c.runbooksCmd(),
		c.configsCmd(), c.buildsCmd(), c.releasesCmd(), c.runnersCmd(), c.tokensCmd(), c.notificationsCmd(), c.usersCmd(), c.driftCmd(), c.auditCmd(),
		c.supportBundleCmd(), c.healthCmd(), c.bundleCmd())
	return root, c
}
