package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) execCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "exec INSTALL [--timeout D] -- COMMAND [ARGS...]",
		Short: "Run a debug command on the install's runner and print its output as it comes",
		Long: "Run COMMAND with ARGS on the install's runner (no shell: use `sh -c '...'` for one); what\n" +
			"follows `--` is the command's, flags included. Its stdout and stderr stream to outpostctl's as\n" +
			"they come. Ctrl-C cancels the command. With -o json, nothing streams: the finished command as\n" +
			"the API shows it (output included).\n\n" +
			"Exit code: the command's own, passed through as is when it ran to its end (0 when it succeeded),\n" +
			"so 1-6 may be the command's too: stderr then says `outpostctl: the command exited N`. When it\n" +
			"could not run or did not end by itself, the exit code is outpostctl's own, with its message on\n" +
			"stderr: 1-5 when the API refused it or was unreachable, 6 when it was cancelled or lost.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fail(exitUsage, "no command: `outpostctl exec INSTALL -- COMMAND [ARGS...]`")
			}
			if timeout != 0 && (timeout < time.Second || timeout > time.Hour) {
				return fail(exitUsage, "--timeout %s: want 1s to 1h", timeout)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			a, inst, err := c.apiForInstall(ctx, args[0])
			if err != nil {
				return err
			}
			req := apiclient.CreateCommandRequest{Command: args[1:]}
			if timeout > 0 {
				secs := int(timeout.Seconds())
				req.TimeoutSeconds = &secs
			}
			r, err := check(a.CreateCommandWithResponse(ctx, inst.Id, req))
			if err != nil {
				return err
			}
			done, err := c.runCommand(ctx, a, *r.JSON202)
			if ctx.Err() != nil {
				stop() // a second Ctrl-C ends outpostctl at once
				return c.cancelCommand(a, *r.JSON202)
			}
			if err != nil {
				return err
			}
			return c.commandResult(done)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "stop the command after this long (default: the API's, 5m; at most 1h)")
	return cmd
}

// runCommand streams the command's job logs (unless -o json) and waits
// until the command has finished.
func (c *cli) runCommand(ctx context.Context, a *api, cmd apiclient.Command) (apiclient.Command, error) {
	var err error
	for cmd.FinishedAt == nil && (cmd.JobId == nil || c.output == "json") {
		if cmd, err = a.command(ctx, cmd, c.output == "json"); err != nil {
			return cmd, err
		}
	}
	switch {
	case c.output == "json":
	case cmd.JobId != nil:
		if _, err := a.followLogs(ctx, *cmd.JobId, c.chunkPrinter(true)); err != nil {
			return cmd, err
		}
	default: // it ended before it had a job
		if _, err := io.WriteString(c.stdout, cmd.Output); err != nil {
			return cmd, err
		}
	}
	for cmd.FinishedAt == nil {
		if cmd, err = a.command(ctx, cmd, true); err != nil {
			return cmd, err
		}
	}
	return cmd, nil
}

// command reads the command again: with wait, once it finished or after
// 20 s; else after a short pause (its job is about to be queued).
func (a *api) command(ctx context.Context, cmd apiclient.Command, wait bool) (apiclient.Command, error) {
	secs := 20
	if !wait {
		secs = 0
		if err := pause(ctx, 250*time.Millisecond); err != nil {
			return cmd, err
		}
	}
	r, err := check(a.GetCommandWithResponse(ctx, cmd.InstallId, cmd.Id, &apiclient.GetCommandParams{Wait: &secs}))
	if err != nil {
		return cmd, err
	}
	return *r.JSON200, nil
}

// commandResult is the exit of a finished command: its own exit code, or
// outpostctl's when it has none.
func (c *cli) commandResult(cmd apiclient.Command) error {
	if c.output == "json" {
		if err := c.printJSON(cmd); err != nil {
			return err
		}
	}
	msg := ""
	if cmd.Error != nil && *cmd.Error != "" {
		msg = ": " + *cmd.Error
	}
	switch {
	case cmd.Status == apiclient.CommandStatusSucceeded:
		return nil
	case cmd.Status == apiclient.CommandStatusFailed && cmd.ExitCode != nil && *cmd.ExitCode != 0:
		return fail(*cmd.ExitCode, "the command exited %d", *cmd.ExitCode)
	}
	return fail(exitOperation, "command %s (%s) %s%s", cmd.Id, strings.Join(cmd.Command, " "), cmd.Status, msg)
}

// cancelCommand cancels the command after Ctrl-C and waits a little for it
// to end.
func (c *cli) cancelCommand(a *api, cmd apiclient.Command) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fmt.Fprintf(c.stderr, "cancelling command %s\n", cmd.Id)
	if _, err := check(a.CancelCommandWithResponse(ctx, cmd.InstallId, cmd.Id)); err != nil {
		return err
	}
	wait := 20
	r, err := check(a.GetCommandWithResponse(ctx, cmd.InstallId, cmd.Id, &apiclient.GetCommandParams{Wait: &wait}))
	if err == nil {
		cmd = *r.JSON200
	}
	return fail(exitOperation, "command %s cancelled (it is %s)", cmd.Id, cmd.Status)
}
