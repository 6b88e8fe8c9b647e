package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) installsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "installs", Short: "Create, list, show and delete installs; set their approval mode; export and import offline deploys"}
	cmd.AddCommand(c.installsCreateCmd(), c.installsListCmd(), c.installsShowCmd(), c.installsDeleteCmd(), c.installsApprovalModeCmd(),
		c.installsLabelsCmd(), c.windowsCmd(), c.installsExportCmd(), c.installsImportResultCmd())
	return cmd
}

func (c *cli) installsCreateCmd() *cobra.Command {
	var name, inputFile string
	var inputs, labels []string
	var in map[string]string
	var lab *apiclient.Labels
	cmd := c.withApp(&cobra.Command{
		Use:   "create --app APP --name NAME [--input name=value]... [--input-file FILE] [--label key=value]...",
		Short: "Create an install and its runner",
		Long: "Create an install of an app, and its runner. Inputs come from --input-file (a YAML or JSON map\n" +
			"of name to value) and --input name=value (which wins); those the app's latest config declares\n" +
			"sensitive are sent as sensitive. The runner's registration token is printed once: start the\n" +
			"runner with it (outpost-runner run --token ...).",
		Args: cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) (err error) {
			if in, err = parseInputs(inputs, inputFile); err != nil {
				return err
			}
			lab, err = newLabels(labels)
			return err
		},
	}, func(ctx context.Context, a *api, app apiclient.App, _ []string) error {
		reqs, err := a.inputRequests(ctx, app.Id, in)
		if err != nil {
			return err
		}
		r, err := check(a.CreateInstallWithResponse(ctx, apiclient.CreateInstallRequest{AppId: app.Id, Name: name, Inputs: &reqs, Labels: lab}))
		return c.printAnswer(r, err, func() error {
			n := r.JSON201
			fmt.Fprintf(c.stdout, "install %s created: %s\nrunner %s, registration token (shown only now): %s\n",
				n.Name, n.Id, n.Runner.Id, n.Runner.RegistrationToken)
			return nil
		})
	})
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the install's name")
	f.StringArrayVar(&inputs, "input", nil, "an input, name=value (repeat for more)")
	f.StringVar(&inputFile, "input-file", "", "a YAML or JSON file mapping input names to values")
	f.StringArrayVar(&labels, "label", nil, "a label, key=value, that selects the install in a release (repeat for more)")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func (c *cli) installsListCmd() *cobra.Command {
	var appRef string
	cmd := c.withAPI(&cobra.Command{Use: "list [--app APP]", Short: "List installs", Args: cobra.NoArgs},
		func(ctx context.Context, a *api, _ []string) error {
			var params apiclient.ListInstallsParams
			if appRef != "" {
				app, err := a.app(ctx, appRef)
				if err != nil {
					return err
				}
				params.AppId = &app.Id
			}
			r, err := check(a.ListInstallsWithResponse(ctx, &params))
			return printRows(c, r, err, "NAME\tID\tAPP\tSTATUS", func() []apiclient.Install { return r.JSON200.Installs },
				func(i apiclient.Install) []string { return []string{i.Name, i.Id, i.AppId, i.Status} })
		})
	cmd.Flags().StringVar(&appRef, "app", "", "only the installs of this app (name or ID)")
	return cmd
}

func (c *cli) installsDeleteCmd() *cobra.Command {
	var yes bool
	cmd := c.withInstall(&cobra.Command{
		Use:   "delete INSTALL --yes",
		Short: "Delete an install and its runner",
		Long: "Delete an install and its runner: the runner's tokens stop working at once; its jobs and logs are\n" +
			"kept. What the install provisioned is not destroyed: deprovision it first. --yes confirms.\n" +
			"With -o json, the install as it was.",
		Args: cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		if !yes {
			return fail(exitUsage, "not deleting install %s (status %s) without --yes: it deletes the install and its runner, not what it provisioned (`outpostctl deprovision %s` first)",
				inst.Name, inst.Status, inst.Name)
		}
		if _, err := check(a.DeleteInstallWithResponse(ctx, inst.Id)); err != nil {
			return err
		}
		if c.output == "json" {
			return c.printJSON(inst)
		}
		fmt.Fprintf(c.stdout, "install %s (%s) deleted\n", inst.Name, inst.Id)
		return nil
	})
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm the deletion")
	return cmd
}

// apiForInstall is the context's client and the install ref names.
func (c *cli) apiForInstall(ctx context.Context, ref string) (*api, apiclient.Install, error) {
	a, err := c.api()
	if err != nil {
		return nil, apiclient.Install{}, err
	}
	inst, err := a.install(ctx, ref)
	return a, inst, err
}

// install finds an install by ID or name; a name two apps' installs share
// is refused.
func (a *api) install(ctx context.Context, ref string) (apiclient.Install, error) {
	r, err := check(a.ListInstallsWithResponse(ctx, &apiclient.ListInstallsParams{}))
	if err != nil {
		return apiclient.Install{}, err
	}
	var found []apiclient.Install
	for _, i := range r.JSON200.Installs {
		if i.Id == ref || i.Name == ref {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		return apiclient.Install{}, fail(exitNotFound, "no install %q (`outpostctl installs list` shows them)", ref)
	case 1:
		return found[0], nil
	}
	return apiclient.Install{}, fail(exitUsage, "%d installs are named %q: name one by its ID (`outpostctl installs list`)", len(found), ref)
}
