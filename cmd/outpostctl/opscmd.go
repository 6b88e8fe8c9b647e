package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) operationsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "operations", Short: "List and show an install's operations"}
	cmd.AddCommand(c.operationsListCmd(), c.operationsShowCmd())
	return cmd
}

func (c *cli) operationsListCmd() *cobra.Command {
	return c.installListCmd("List an install's operations, newest first",
		func(ctx context.Context, a *api, inst string, limit *int) error {
			r, err := check(a.ListOperationsWithResponse(ctx, inst, &apiclient.ListOperationsParams{Limit: limit}))
			return printRows(c, r, err, "ID\tKIND\tSTATUS\tSTARTED\tTOOK", func() []apiclient.Operation { return r.JSON200.Operations },
				func(op apiclient.Operation) []string {
					return []string{op.Id, opTitle(op), op.Status, clock(op.CreatedAt), took(op.CreatedAt, op.FinishedAt)}
				})
		})
}

// installListCmd is `list INSTALL [--limit N]`: list prints what it lists
// of the install (its ID), newest first.
func (c *cli) installListCmd(short string, list func(ctx context.Context, a *api, inst string, limit *int) error) *cobra.Command {
	var limit int
	cmd := c.withInstall(&cobra.Command{
		Use:   "list INSTALL [--limit N]",
		Short: short,
		Args:  cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		return list(ctx, a, inst.Id, &limit)
	})
	cmd.Flags().IntVar(&limit, "limit", 50, "how many to list, newest first (1-200)")
	return cmd
}

func (c *cli) operationsShowCmd() *cobra.Command {
	var plans bool
	cmd := c.withInstall(&cobra.Command{
		Use:   "show INSTALL [OPERATION] [--plans]",
		Short: "Show an operation (default: the install's latest) and its steps, as a tree of their dependencies",
		Long: "Show an operation and its steps: status, start and duration, their jobs (`outpostctl logs JOB`)\n" +
			"and error. Steps hang below the first component they depend on (in the app config the operation\n" +
			"ran). With --plans, each step's plan too. With -o json, the operation as the API shows it.",
		Args: cobra.RangeArgs(1, 2),
	}, func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
		ref := ""
		if len(args) == 2 {
			ref = args[1]
		}
		op, body, err := a.operation(ctx, inst, ref)
		if err != nil {
			return err
		}
		if c.output == "json" {
			return c.printBody(body)
		}
		c.showOperation(op, inst.Name, a.dependencies(ctx, inst.AppId, op.ConfigVersion), plans)
		return nil
	})
	cmd.Flags().BoolVar(&plans, "plans", false, "print each step's plan")
	return cmd
}

// operation is the install's operation ref names ("" or latest: the
// newest), and the API's answer.
func (a *api) operation(ctx context.Context, inst apiclient.Install, ref string) (apiclient.Operation, []byte, error) {
	if ref == "" || ref == "latest" {
		one := 1
		r, err := check(a.ListOperationsWithResponse(ctx, inst.Id, &apiclient.ListOperationsParams{Limit: &one}))
		if err != nil {
			return apiclient.Operation{}, nil, err
		}
		if len(r.JSON200.Operations) == 0 {
			return apiclient.Operation{}, nil, fail(exitNotFound, "install %s has no operation yet (start one: `outpostctl provision %s`)", inst.Name, inst.Name)
		}
		ref = r.JSON200.Operations[0].Id
	}
	r, err := check(a.GetOperationWithResponse(ctx, inst.Id, ref, &apiclient.GetOperationParams{}))
	if err != nil {
		return apiclient.Operation{}, nil, err
	}
	return *r.JSON200, r.Body, nil
}

// dependencies are the components' dependencies in the config version the
// operation ran; nil if it cannot be read (the steps are then listed).
func (a *api) dependencies(ctx context.Context, appID string, configVersion *int) map[string][]string {
	version := "latest"
	if configVersion != nil {
		version = fmt.Sprint(*configVersion)
	}
	r, err := check(a.GetAppConfigWithResponse(ctx, appID, version))
	if err != nil {
		return nil
	}
	deps := map[string][]string{}
	for _, comp := range r.JSON200.Components {
		deps[comp.Name] = comp.Dependencies
	}
	return deps
}

// opTitle is an operation's kind, and its component if it has one.
func opTitle(op apiclient.Operation) string {
	if op.Component != nil && *op.Component != "" {
		return op.Kind + " " + *op.Component
	}
	return op.Kind
}

// clock is a time as people read it, "-" when unset.
func clock(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// took is how long from start to end, "-" until both are set.
func took(start, end *time.Time) string {
	if start == nil || end == nil {
		return "-"
	}
	return end.Sub(*start).Round(time.Second).String()
}
