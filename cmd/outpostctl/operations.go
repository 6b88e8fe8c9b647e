package main

import (
	"context"
	"encoding/json"
	"fmt"
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
		Long: "Start the operation and print its ID; with --wait, follow it: on a terminal, a tree of its steps\n" +
			"updated in place (status, time, the running job's last log line, a plan waiting for approval), else\n" +
			"a line per change of a step's status; then a summary (exit code 6 unless it succeeded). Ctrl-C\n" +
			"detaches (exit 130; `outpostctl wait` follows it again), or with --cancel-on-interrupt cancels it.\n" +
			"With -o json, the operation as the API shows it (with --wait, once it has finished; the progress\n" +
			"lines go to stderr).",
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
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			return c.follow(ctx, a, inst, op)
		},
	}
	c.waitFlags(cmd, &wait, &timeout)
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
