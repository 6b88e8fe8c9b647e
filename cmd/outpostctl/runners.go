package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) runnersCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "runners", Short: "List and show runners, issue their tokens, print their helm install, update them"}
	cmd.AddCommand(c.runnersListCmd(), c.runnersShowCmd(), c.runnersTokenCmd(), c.runnersHelmInstallCmd(), c.runnersRevokeCmd())
	cmd.AddCommand(c.runnerUpdateCmds()...)
	return cmd
}

func (c *cli) runnersListCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{
		Use:   "list",
		Short: "List the org's runners: one per install, and the build runner",
		Args:  cobra.NoArgs,
	}, func(ctx context.Context, a *api, _ []string) error {
		r, err := check(a.ListRunnersWithResponse(ctx))
		return printRows(c, r, err, "ID\tKIND\tINSTALL\tSTATUS\tLAST SEEN\tVERSION\tPLATFORM",
			func() []apiclient.Runner { return r.JSON200.Runners },
			func(rn apiclient.Runner) []string {
				install := "-"
				if rn.InstallId != nil {
					install = *rn.InstallId
				}
				version := rn.Version
				if rn.UpdateAvailable != nil {
					version += " (" + rn.UpdateAvailable.Version + " available, waiting for the customer)"
				}
				return []string{rn.Id, rn.Kind, install, string(rn.Status), lastSeen(rn), version, orUnknown(rn.Platform)}
			})
	})
}

func (c *cli) runnersShowCmd() *cobra.Command {
	var installRef string
	cmd := c.withAPI(&cobra.Command{
		Use:   "show RUNNER_ID | --install INSTALL",
		Short: "Show a runner: online or offline, when last seen, its version and capabilities",
		Args:  cobra.MaximumNArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) error {
			if (len(args) == 1) == (installRef != "") {
				return fail(exitUsage, "name the runner by its ID or by --install INSTALL, one of the two")
			}
			return nil
		},
	}, func(ctx context.Context, a *api, args []string) error {
		var id string
		var err error
		if len(args) == 1 {
			id = args[0]
		} else if id, err = a.installRunner(ctx, installRef); err != nil {
			return err
		}
		r, err := check(a.GetRunnerWithResponse(ctx, id))
		return c.printAnswer(r, notFound(err, "no runner %q (`outpostctl runners list` shows them)", id), func() error {
			c.showRunner(*r.JSON200)
			return nil
		})
	})
	cmd.Flags().StringVar(&installRef, "install", "", "the runner of this install (name or ID)")
	return cmd
}

func (c *cli) showRunner(r apiclient.Runner) {
	w := c.stdout
	of := "the org's build runner"
	if r.InstallId != nil {
		of = "install " + *r.InstallId
	}
	fmt.Fprintf(w, "runner %s (%s runner, %s): %s, %s\n", r.Id, r.Kind, of, r.Status, lastSeen(r))
	registered := "not registered yet"
	if r.RegisteredAt != nil {
		registered = "registered " + stamp(*r.RegisteredAt)
	}
	fmt.Fprintf(w, "version %s, platform %s, %s\n", orUnknown(r.Version), orUnknown(r.Platform), registered)
	if u := r.UpdateAvailable; u != nil {
		fmt.Fprintf(w, "update available, waiting for the customer: runner %s (update %s); the customer accepts it on the runner "+
			"with `outpost-runner update accept %s`\n", u.Version, u.Id, u.Version)
	}
	if len(r.Capabilities) > 0 {
		fmt.Fprintf(w, "capabilities: %s\n", strings.Join(r.Capabilities, ", "))
	}
	if r.StatusSince != nil {
		fmt.Fprintf(w, "%s since %s\n", r.Status, stamp(*r.StatusSince))
	}
	if r.ConnectionErrors != nil && len(*r.ConnectionErrors) > 0 {
		fmt.Fprintln(w, "failed calls to the gateway, as it reported them once it got through:")
		for _, e := range *r.ConnectionErrors {
			fmt.Fprintf(w, "  %s %s: %s\n", stamp(e.At), e.Kind, e.Message)
		}
	}
	if r.Updates != nil && len(*r.Updates) > 0 {
		fmt.Fprintln(w, "updates, newest first:")
		for _, u := range *r.Updates {
			c.showRunnerUpdate(u)
		}
	}
}

// lastSeen is when the runner last called the gateway, as an age.
func lastSeen(r apiclient.Runner) string {
	if r.LastSeenAt == nil {
		return "never seen"
	}
	return "last seen " + time.Since(*r.LastSeenAt).Round(time.Second).String() + " ago"
}

// installRunner is the ID of the install's runner.
func (a *api) installRunner(ctx context.Context, ref string) (string, error) {
	inst, err := a.install(ctx, ref)
	if err != nil {
		return "", err
	}
	if inst.Runner == nil {
		return "", fail(exitNotFound, "install %s has no runner", inst.Name)
	}
	return inst.Runner.Id, nil
}

func (c *cli) runnersTokenCmd() *cobra.Command {
	var build bool
	cmd := c.withAPI(&cobra.Command{
		Use:   "token INSTALL | --build",
		Short: "Issue a new one-time registration token for the install's runner (or the org's build runner), and print it once",
		Long: "Issue a new one-time registration token for the install's runner, or with --build for the org's\n" +
			"build runner; the previous one stops working, the tokens the runner already holds stay valid.\n" +
			"It is printed only now.",
		Args: cobra.MaximumNArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) error {
			if (len(args) == 1) == build {
				return fail(exitUsage, "name the install, or give --build for the org's build runner, one of the two")
			}
			return nil
		},
	}, func(ctx context.Context, a *api, args []string) error {
		var id string
		var err error
		if build {
			id, err = a.buildRunner(ctx)
		} else {
			id, err = a.installRunner(ctx, args[0])
		}
		if err != nil {
			return err
		}
		r, err := check(a.RotateRegistrationTokenWithResponse(ctx, id))
		return c.printAnswer(r, err, func() error {
			fmt.Fprintf(c.stdout, "runner %s, registration token (shown only now): %s\n", id, r.JSON200.RegistrationToken)
			return nil
		})
	})
	cmd.Flags().BoolVar(&build, "build", false, "the org's build runner")
	return cmd
}

// buildRunner is the ID of the org's build runner (listing runners creates it on first use).
func (a *api) buildRunner(ctx context.Context) (string, error) {
	r, err := check(a.ListRunnersWithResponse(ctx))
	if err != nil {
		return "", err
	}
	rn, err := findIn(r.JSON200.Runners, func(rn apiclient.Runner) bool { return rn.Kind == "build" }, "the org has no build runner")
	return rn.Id, err
}

func (c *cli) runnersHelmInstallCmd() *cobra.Command {
	var namespace, secret, image, chart, version string
	cmd := c.installCmd("helm-install INSTALL [--namespace NS] [--token-secret NAME] [--image REF] [--chart REF] [--version V]",
		"Print the commands that install the install's runner in a Kubernetes cluster with helm", 1,
		func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
			p := apiclient.GetRunnerHelmInstallParams{Namespace: optional(namespace), TokenSecret: optional(secret),
				Image: optional(image), Chart: optional(chart), Version: optional(version)}
			r, err := check(a.GetRunnerHelmInstallWithResponse(ctx, inst.Id, &p))
			return c.printAnswer(r, err, func() error {
				h := r.JSON200
				fmt.Fprintf(c.stdout, "%s\n# Replace <TOKEN> with a registration token (`outpostctl runners token %s` issues one):\n%s\n%s\n",
					h.NamespaceCommand, inst.Name, h.SecretCommand, h.Command)
				return nil
			})
		})
	f := cmd.Flags()
	f.StringVar(&namespace, "namespace", "", "the runner's namespace (default outpost-runner)")
	f.StringVar(&secret, "token-secret", "", "the Secret holding the runner's token (default outpost-runner-token)")
	f.StringVar(&image, "image", "", "the runner image, repository[:tag][@sha256:digest] (default: the control plane's)")
	f.StringVar(&chart, "chart", "", "the chart reference (default: the API's)")
	f.StringVar(&version, "version", "", "the chart's version (default: the API's)")
	return cmd
}

func (c *cli) runnersRevokeCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{
		Use:   "revoke-tokens RUNNER_ID",
		Short: "Revoke every access token of a runner",
		Long: "Revoke every access token the runner holds: it stops working at once, until it registers again\n" +
			"with a new registration token (`outpostctl runners token INSTALL`). With -o json, the runner.",
		Args: cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, args []string) error {
		_, err := check(a.RevokeRunnerTokensWithResponse(ctx, args[0]))
		if err = notFound(err, "no runner %q (`outpostctl runners list` shows them)", args[0]); err != nil {
			return err
		}
		if c.output == "json" {
			r, err := check(a.GetRunnerWithResponse(ctx, args[0]))
			if err != nil {
				return err
			}
			return c.printBody(r.Body)
		}
		fmt.Fprintf(c.stdout, "runner %s: every access token revoked\n", args[0])
		return nil
	})
}

// optional is nil for a flag left empty, so the API applies its default.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// orUnknown is a fact a runner reported, or "unknown" when it reported none.
func orUnknown(fact string) string {
	if fact == "" {
		return "unknown"
	}
	return fact
}
