package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) healthCmd() *cobra.Command {
	var labels []string
	cmd := &cobra.Command{
		Use:   "health [INSTALL] [--label key=value]...",
		Short: "Installs' health: one install's components and transitions, or the fleet's",
		Long: "Health is what each install's runner reads in the install's cluster: the readiness of the objects of\n" +
			"every helm release (docs/architecture/health.md). An install is as healthy as its worst component:\n" +
			"healthy, degraded, unhealthy, or unknown while its runner is offline or before it reported.\n" +
			"With INSTALL: its components and their latest transitions. Without: every install (--label filters).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if len(labels) > 0 {
					return fail(exitUsage, "--label filters the fleet list: give no INSTALL with it")
				}
				return c.installHealth(cmd, args[0])
			}
			return c.fleetHealth(cmd, labels)
		},
	}
	cmd.Flags().StringArrayVar(&labels, "label", nil, "only installs with this label, key=value (repeat: all must match)")
	return cmd
}

func (c *cli) installHealth(cmd *cobra.Command, ref string) error {
	a, inst, err := c.apiForInstall(cmd.Context(), ref)
	if err != nil {
		return err
	}
	r, err := check(a.GetInstallHealthWithResponse(cmd.Context(), inst.Id))
	return c.printAnswer(r, err, func() error {
		h := r.JSON200
		fmt.Fprintf(c.stdout, "install %s: %s%s\n", inst.Name, h.Health.State, sinceText(h.Health.Since))
		if why := whyText(deref(h.Health.Component), deref(h.Health.Object), deref(h.Health.Condition)); why != "" {
			fmt.Fprintf(c.stdout, "why: %s\n", why)
		}
		var rows [][]string
		for _, x := range h.Components {
			rows = append(rows, []string{x.Component, string(x.State), stamp(x.Since), whyText("", deref(x.Object), deref(x.Condition))})
		}
		fmt.Fprintln(c.stdout)
		if err := table(c.stdout, "COMPONENT\tSTATE\tSINCE\tWHY", rows); err != nil {
			return err
		}
		rows = nil
		for _, t := range h.Transitions {
			rows = append(rows, []string{stamp(t.At), t.Component, deref(t.From) + "→" + string(t.To), whyText("", deref(t.Object), deref(t.Condition))})
		}
		fmt.Fprintln(c.stdout)
		return table(c.stdout, "AT\tCOMPONENT\tCHANGE\tWHY", rows)
	})
}

func (c *cli) fleetHealth(cmd *cobra.Command, labels []string) error {
	want, err := newLabels(labels)
	if err != nil {
		return err
	}
	a, err := c.api()
	if err != nil {
		return err
	}
	r, err := check(a.ListInstallsWithResponse(cmd.Context(), &apiclient.ListInstallsParams{}))
	if err != nil {
		return err
	}
	var shown []apiclient.Install
	for _, i := range r.JSON200.Installs {
		if hasLabels(i.Labels, want) {
			shown = append(shown, i)
		}
	}
	if c.output == "json" {
		return c.printJSON(shown)
	}
	var rows [][]string
	for _, i := range shown {
		state, since, why := "unknown", "", ""
		if h := i.Health; h != nil {
			state, since, why = string(h.State), sinceText(h.Since), whyText(deref(h.Component), deref(h.Object), deref(h.Condition))
		}
		rows = append(rows, []string{i.Name, i.Id, state + since, why})
	}
	return table(c.stdout, "NAME\tID\tHEALTH\tWHY", rows)
}

// hasLabels says whether labels hold every one of want.
func hasLabels(labels apiclient.Labels, want *apiclient.Labels) bool {
	if want == nil {
		return true
	}
	for k, v := range *want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func sinceText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return " since " + stamp(*t)
}

// whyText joins what is known of why: "component: object: condition".
func whyText(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}
