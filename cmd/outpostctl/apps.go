package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) appsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "apps", Short: "List and create apps, sync their configs"}
	cmd.AddCommand(c.appsListCmd(), c.appsCreateCmd(), c.appsSyncCmd())
	return cmd
}

func (c *cli) appsListCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{Use: "list", Short: "List the org's apps", Args: cobra.NoArgs},
		func(ctx context.Context, a *api, _ []string) error {
			r, err := check(a.ListAppsWithResponse(ctx))
			return printRows(c, r, err, "NAME\tID\tDESCRIPTION", func() []apiclient.App { return r.JSON200.Apps },
				func(app apiclient.App) []string { return []string{app.Name, app.Id, app.Description} })
		})
}

func (c *cli) appsCreateCmd() *cobra.Command {
	var description string
	cmd := c.withAPI(&cobra.Command{Use: "create NAME [--description TEXT]", Short: "Create an app", Args: cobra.ExactArgs(1)},
		func(ctx context.Context, a *api, args []string) error {
			body := apiclient.CreateAppRequest{Name: args[0]}
			if description != "" {
				body.Description = &description
			}
			r, err := check(a.CreateAppWithResponse(ctx, body))
			return c.printAnswer(r, err, func() error {
				fmt.Fprintf(c.stdout, "app %s created: %s\n", r.JSON201.Name, r.JSON201.Id)
				return nil
			})
		})
	cmd.Flags().StringVar(&description, "description", "", "what the app is")
	return cmd
}

// apiForApp is the context's client and the app ref names.
func (c *cli) apiForApp(ctx context.Context, ref string) (*api, apiclient.App, error) {
	a, err := c.api()
	if err != nil {
		return nil, apiclient.App{}, err
	}
	app, err := a.app(ctx, ref)
	return a, app, err
}

// app finds an app by name or ID.
func (a *api) app(ctx context.Context, ref string) (apiclient.App, error) {
	r, err := check(a.ListAppsWithResponse(ctx))
	if err != nil {
		return apiclient.App{}, err
	}
	return findIn(r.JSON200.Apps, func(app apiclient.App) bool { return app.Id == ref || app.Name == ref },
		"no app %q (`outpostctl apps list` shows them; `outpostctl apps create %s` makes it)", ref, ref)
}

// findIn is the first of items for which is says it is the one sought, else a
// not-found error (exit code 4) saying format.
func findIn[T any](items []T, is func(T) bool, format string, args ...any) (T, error) {
	for _, it := range items {
		if is(it) {
			return it, nil
		}
	}
	var none T
	return none, fail(exitNotFound, format, args...)
}
