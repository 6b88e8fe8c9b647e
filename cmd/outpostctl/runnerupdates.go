package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

// runnerUpdateCmds are the runner self-update commands under "runners".
func (c *cli) runnerUpdateCmds() []*cobra.Command {
	return []*cobra.Command{c.runnersUpdateCmd(), c.runnersPolicyCmd(), c.runnersOrgVersionCmd(), c.runnersVersionsCmd()}
}

func (c *cli) runnersUpdateCmd() *cobra.Command {
	var version string
	var deadline, drain time.Duration
	var wait bool
	cmd := c.withInstall(&cobra.Command{
		Use:   "update INSTALL [--version V] [--deadline 2m] [--drain-timeout 1h] [--wait]",
		Short: "Update the install's runner to a version (default: its target), rolled back unless healthy within the deadline",
		Args:  cobra.ExactArgs(1),
		PreRunE: func(*cobra.Command, []string) error {
			if deadline != 0 && (deadline < 5*time.Second || deadline > time.Hour) {
				return fail(exitUsage, "--deadline must be between 5s and 1h, got %s", deadline)
			}
			if drain != 0 && (drain < 5*time.Second || drain > 24*time.Hour) {
				return fail(exitUsage, "--drain-timeout must be between 5s and 24h, got %s", drain)
			}
			return nil
		},
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		body := apiclient.CreateRunnerUpdateRequest{Version: optional(version)}
		body.HealthDeadlineSeconds, body.DrainTimeoutSeconds = optionalSeconds(deadline), optionalSeconds(drain)
		r, err := check(a.CreateRunnerUpdateWithResponse(ctx, inst.Id, body))
		if err != nil {
			return err
		}
		u := *r.JSON202
		if wait {
			if u, err = a.awaitRunnerUpdate(ctx, inst.Id, u.Id); err != nil {
				return err
			}
		}
		if c.output == "json" {
			return c.printJSON(u)
		}
		c.showRunnerUpdate(u)
		if u.Status == apiclient.RunnerUpdateStatusAvailable {
			fmt.Fprintf(c.stdout, "update available, waiting for the customer: the runner runs %s until its customer accepts %s\n", deref(u.FromVersion), u.Version)
		}
		if u.Status == apiclient.RunnerUpdateStatusFailed {
			return fail(exitOperation, "the runner update failed; the previous runner runs")
		}
		return nil
	})
	f := cmd.Flags()
	f.StringVar(&version, "version", "", "the runner version (default: the install's target: its own version, else its org's)")
	f.DurationVar(&deadline, "deadline", 0, "how long the new runner has to report healthy (default 2m)")
	f.DurationVar(&drain, "drain-timeout", 0, "how long the old runner waits for its running jobs before it hands over; past it the update fails (default 1h)")
	f.BoolVar(&wait, "wait", false, "wait until the update succeeded or was rolled back")
	return cmd
}

// optionalSeconds is d in whole seconds, or nil for 0 (the API's default).
func optionalSeconds(d time.Duration) *int {
	if d == 0 {
		return nil
	}
	secs := int(d / time.Second)
	return &secs
}

// awaitRunnerUpdate polls the update until it ended.
func (a *api) awaitRunnerUpdate(ctx context.Context, installID, id string) (apiclient.RunnerUpdate, error) {
	var u apiclient.RunnerUpdate
	err := pollUntil(ctx, time.Second, func() (bool, error) {
		r, err := check(a.GetRunnerUpdateWithResponse(ctx, installID, id))
		if err != nil {
			return false, err
		}
		u = *r.JSON200
		return u.Status != apiclient.RunnerUpdateStatusRunning, nil
	})
	if err != nil {
		return apiclient.RunnerUpdate{}, err
	}
	return u, nil
}

func (c *cli) showRunnerUpdate(u apiclient.RunnerUpdate) {
	from := "?"
	if u.FromVersion != nil && *u.FromVersion != "" {
		from = *u.FromVersion
	}
	fmt.Fprintf(c.stdout, "update %s: %s → %s, %s (started %s)\n", u.Id, from, u.Version, u.Status, stamp(u.CreatedAt))
	if u.Reason != nil && *u.Reason != "" {
		fmt.Fprintf(c.stdout, "  %s\n", *u.Reason)
	}
}

func (c *cli) runnersPolicyCmd() *cobra.Command {
	var version string
	var pin, unpin, setVersion bool
	cmd := c.withInstall(&cobra.Command{
		Use:   "policy INSTALL [--version V | --version ''] [--pin | --unpin]",
		Short: "Show or set the install's runner version: its own (overriding the org's), or pinned (never updated)",
		Args:  cobra.ExactArgs(1),
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			if pin && unpin {
				return fail(exitUsage, "--pin and --unpin: one of the two")
			}
			setVersion = cmd.Flags().Changed("version")
			return nil
		},
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		var p apiclient.RunnerPolicy
		if setVersion || pin || unpin {
			body := apiclient.RunnerPolicyRequest{}
			if setVersion {
				body.Version = &version
			}
			if pin || unpin {
				body.Pinned = &pin
			}
			r, err := check(a.PutInstallRunnerPolicyWithResponse(ctx, inst.Id, body))
			if err != nil {
				return err
			}
			p = *r.JSON200
		} else {
			r, err := check(a.GetInstallRunnerPolicyWithResponse(ctx, inst.Id))
			if err != nil {
				return err
			}
			p = *r.JSON200
		}
		if c.output == "json" {
			return c.printJSON(p)
		}
		target := p.Target
		if p.Pinned {
			target = "none (pinned)"
		} else if target == "" {
			target = "none (no version wanted)"
		}
		fmt.Fprintf(c.stdout, "org version %q, install version %q, pinned %t: target %s\n", p.OrgVersion, p.Version, p.Pinned, target)
		return nil
	})
	f := cmd.Flags()
	f.StringVar(&version, "version", "", "the install's own runner version (\"\" follows the org's)")
	f.BoolVar(&pin, "pin", false, "pin the install's runner: it is not updated")
	f.BoolVar(&unpin, "unpin", false, "unpin it")
	return cmd
}

func (c *cli) runnersOrgVersionCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{
		Use:   "org-version VERSION",
		Short: "Set the runner version the org's installs should run (\"\" for none)",
		Args:  cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, args []string) error {
		r, err := check(a.PutOrgRunnerPolicyWithResponse(ctx, apiclient.RunnerPolicyRequest{Version: &args[0]}))
		return c.printAnswer(r, err, func() error {
			fmt.Fprintf(c.stdout, "the org's runners should run %q\n", r.JSON200.OrgVersion)
			return nil
		})
	})
}

func (c *cli) runnersVersionsCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{Use: "versions", Short: "List the published runner versions, newest first", Args: cobra.NoArgs},
		func(ctx context.Context, a *api, _ []string) error {
			r, err := check(a.ListRunnerVersionsWithResponse(ctx))
			return c.printAnswer(r, err, func() error {
				for _, v := range r.JSON200.Versions {
					fmt.Fprintf(c.stdout, "%s\t%s\t%d bytes\t%s\n", v.Version, v.BinaryDigest, v.Size, stamp(v.CreatedAt))
				}
				return nil
			})
		})
}
