package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

// operationCmd is provision or deprovision.
func (c *cli) operationCmd(kind string) *cobra.Command {
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   kind + " INSTALL [--wait]",
		Short: map[string]string{"provision": "Provision an install: its sandbox, then every component", "deprovision": "Deprovision an install: every component, then its sandbox"}[kind],
		Long: "Start the operation and print its ID; with --wait, follow it: a line per change of a step's status,\n" +
			"then a summary (exit code 6 unless it succeeded). With -o json, the operation as the API shows it\n" +
			"(with --wait, once it has finished; the progress lines go to stderr).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.api()
			if err != nil {
				return err
			}
			inst, err := a.install(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			op, body, err := a.startOperation(cmd.Context(), kind, inst.Id)
			if err != nil {
				return err
			}
			if !wait {
				if c.output == "json" {
					return c.printBody(body)
				}
				fmt.Fprintf(c.stdout, "%s %s started on install %s (workflow %s)\n", kind, op.Id, inst.Name, op.WorkflowId)
				return nil
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			return c.follow(ctx, a, inst, op)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the operation until it finishes")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "with --wait, stop waiting after this long (the operation goes on; 0: no limit)")
	return cmd
}

func (a *api) startOperation(ctx context.Context, kind, installID string) (apiclient.Operation, []byte, error) {
	var r answer
	var err error
	if kind == "provision" {
		r, err = a.ProvisionInstallWithResponse(ctx, installID, apiclient.OperationRequest{})
	} else {
		r, err = a.DeprovisionInstallWithResponse(ctx, installID, apiclient.OperationRequest{})
	}
	if r, err = check(r, err); err != nil {
		return apiclient.Operation{}, nil, err
	}
	var op apiclient.Operation
	if err := json.Unmarshal(r.GetBody(), &op); err != nil {
		return op, nil, fmt.Errorf("read the API's answer: %w", err)
	}
	return op, r.GetBody(), nil
}

// follow polls the operation (the API holds each call up to 20 s) and
// prints each status change until it finishes.
func (c *cli) follow(ctx context.Context, a *api, inst apiclient.Install, op apiclient.Operation) error {
	progress := c.stdout
	if c.output == "json" {
		progress = c.stderr
	}
	start, seen := time.Now(), map[string]string{}
	wait := 20
	for {
		r, err := check(a.GetOperationWithResponse(ctx, inst.Id, op.Id, &apiclient.GetOperationParams{Wait: &wait}))
		if ctx.Err() != nil {
			return fail(exitOperation, "stopped waiting for %s %s; it goes on: `outpostctl installs show %s`", op.Kind, op.Id, inst.Name)
		}
		if err != nil {
			return err
		}
		cur := *r.JSON200
		printChanges(progress, cur, seen)
		if cur.FinishedAt != nil {
			return c.finished(cur, r.Body, time.Since(start))
		}
	}
}

// printChanges prints a line for the operation's and each step's status
// that differs from seen, and records it.
func printChanges(w io.Writer, op apiclient.Operation, seen map[string]string) {
	now := time.Now().Format("15:04:05")
	if seen["\x00op"] != op.Status {
		seen["\x00op"] = op.Status
		fmt.Fprintf(w, "%s %s %s: %s\n", now, op.Kind, op.Id, op.Status)
	}
	if op.Steps == nil {
		return
	}
	for _, s := range *op.Steps {
		if seen[s.Name] == s.Status {
			continue
		}
		seen[s.Name] = s.Status
		line := fmt.Sprintf("%s   %s: %s", now, s.Name, s.Status)
		if s.Error != nil && *s.Error != "" {
			line += " (" + *s.Error + ")"
		}
		fmt.Fprintln(w, line)
	}
}

func (c *cli) finished(op apiclient.Operation, body []byte, took time.Duration) error {
	if c.output == "json" {
		if err := c.printBody(body); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.stdout, "%s %s %s in %s\n", op.Kind, op.Id, op.Status, took.Round(time.Second))
	}
	if op.Status != "succeeded" {
		msg := ""
		if op.Error != nil {
			msg = ": " + *op.Error
		}
		return fail(exitOperation, "%s %s %s%s", op.Kind, op.Id, op.Status, msg)
	}
	return nil
}
