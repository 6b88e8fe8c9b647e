package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) driftCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "drift", Short: "Check installs for drift: now, on a schedule; show what was found"}
	cmd.AddCommand(c.driftCheckCmd(), c.driftShowCmd(), c.driftScheduleCmd())
	return cmd
}

func (c *cli) driftCheckCmd() *cobra.Command {
	return c.withInstall(&cobra.Command{
		Use:   "check INSTALL",
		Short: "Check the install for drift now (a drift_check operation)",
		Long: "Plan the install's sandbox and every component, without locks (it never holds up an operation):\n" +
			"terraform plans; helm charts compared with the cluster's live objects (an object edited or deleted\n" +
			"behind helm's back); images checked in the install's registry. A plan that is not empty is drift\n" +
			"(outpostctl drift show). Follow it with outpostctl wait INSTALL OPERATION.",
		Args: cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		r, err := check(a.CheckDriftWithResponse(ctx, inst.Id))
		return c.printAnswer(r, err, func() error {
			fmt.Fprintf(c.stdout, "drift check %s of install %s started\n", r.JSON202.Id, inst.Name)
			return nil
		})
	})
}

func (c *cli) driftShowCmd() *cobra.Command {
	var plans bool
	cmd := c.installCmd("show INSTALL [--plans]", "What the drift checks found: per sandbox and component, drifted and since when", 1,
		func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
			r, err := check(a.GetDriftWithResponse(ctx, inst.Id))
			return c.printAnswer(r, err, func() error {
				return c.printDrift(*r.JSON200, plans)
			})
		})
	cmd.Flags().BoolVar(&plans, "plans", false, "print the plan of each drifted component")
	return cmd
}

func (c *cli) printDrift(d apiclient.Drift, plans bool) error {
	schedule := "none"
	if d.Every != "" {
		schedule = "every " + d.Every
	}
	fmt.Fprintf(c.stdout, "schedule: %s, reconcile: %v\n", schedule, d.Reconcile)
	var rows [][]string
	for _, x := range d.Components {
		drifted, since := "no", ""
		if x.Drifted {
			drifted = "yes"
		}
		if x.Since != nil {
			since = x.Since.UTC().Format(time.RFC3339)
		}
		rows = append(rows, []string{x.Name, drifted, since, x.CheckedAt.UTC().Format(time.RFC3339), x.OperationId})
	}
	if err := table(c.stdout, "NAME\tDRIFTED\tSINCE\tCHECKED\tBY", rows); err != nil {
		return err
	}
	for _, x := range d.Components {
		if plans && x.Drifted && x.Plan != nil {
			fmt.Fprintf(c.stdout, "\n%s:\n%s\n", x.Name, *x.Plan)
		}
	}
	return nil
}

func (c *cli) driftScheduleCmd() *cobra.Command {
	var every string
	var reconcile, off bool
	cmd := c.withInstall(&cobra.Command{
		Use:   "schedule INSTALL (--every DURATION [--reconcile] | --off)",
		Short: "Check the install for drift on a schedule",
		Long: "--every 6h checks every six hours; --reconcile (under approve-all) applies the drift a check\n" +
			"finds, waiting for the install's maintenance window; --off deletes the schedule.",
		Args: cobra.ExactArgs(1),
		PreRunE: func(*cobra.Command, []string) error {
			if (every == "") == !off {
				return fail(exitUsage, "give --every DURATION or --off")
			}
			return nil
		},
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		r, err := check(a.SetDriftScheduleWithResponse(ctx, inst.Id, apiclient.DriftScheduleRequest{Every: every, Reconcile: &reconcile}))
		return c.printAnswer(r, err, func() error {
			if every == "" {
				fmt.Fprintf(c.stdout, "install %s: no drift schedule\n", inst.Name)
				return nil
			}
			fmt.Fprintf(c.stdout, "install %s: drift checked every %s, reconcile %v\n", inst.Name, every, reconcile)
			return nil
		})
	})
	f := cmd.Flags()
	f.StringVar(&every, "every", "", "the interval between checks, e.g. 30m, 6h")
	f.BoolVar(&reconcile, "reconcile", false, "apply drift found (approve-all), in the install's maintenance window")
	f.BoolVar(&off, "off", false, "delete the schedule")
	return cmd
}
