package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) buildsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "builds", Short: "List, show and start the builds of an app's components"}
	cmd.AddCommand(c.buildsListCmd(), c.buildsShowCmd(), c.buildsStartCmd())
	return cmd
}

func (c *cli) buildsListCmd() *cobra.Command {
	var component, version string
	cmd := c.withApp(&cobra.Command{
		Use:   "list --app APP [--component C] [--config-version N]",
		Short: "List an app's builds, newest first (with --config-version, the builds that version uses)",
		Args:  cobra.NoArgs,
	}, func(ctx context.Context, a *api, app apiclient.App, _ []string) error {
		params := apiclient.ListBuildsParams{Component: optional(component), ConfigVersion: optional(version)}
		r, err := check(a.ListBuildsWithResponse(ctx, app.Id, &params))
		return printRows(c, r, err, "ID\tCOMPONENT\tSTATUS\tCONFIG\tCREATED", func() []apiclient.Build { return r.JSON200.Builds },
			func(b apiclient.Build) []string {
				return []string{b.Id, b.Component, string(b.Status), fmt.Sprint(b.ConfigVersion), stamp(b.CreatedAt)}
			})
	})
	cmd.Flags().StringVar(&component, "component", "", "only the builds of this component")
	cmd.Flags().StringVar(&version, "config-version", "", "the builds this config version (a number, or latest) uses")
	return cmd
}

func (c *cli) buildsShowCmd() *cobra.Command {
	return c.withApp(&cobra.Command{
		Use:   "show --app APP BUILD_ID",
		Short: "Show a build: its status, artifact and digest, or why it failed",
		Args:  cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, app apiclient.App, args []string) error {
		r, err := check(a.GetBuildWithResponse(ctx, app.Id, args[0]))
		return c.printAnswer(r, notFound(err, "app %s has no build %q (`outpostctl builds list --app %s` shows them)", app.Name, args[0], app.Name), func() error {
			c.showBuild(*r.JSON200)
			return nil
		})
	})
}

func (c *cli) showBuild(b apiclient.Build) {
	w := c.stdout
	fmt.Fprintf(w, "build %s of %s (%s), config version %d: %s\n", b.Id, b.Component, b.ComponentType, b.ConfigVersion, b.Status)
	fmt.Fprintf(w, "artifact: %s:%s\n", b.Repository, b.Tag)
	if b.Digest != nil {
		fmt.Fprintf(w, "digest: %s\n", *b.Digest)
	}
	if b.ArtifactType != nil && b.Size != nil {
		fmt.Fprintf(w, "type: %s, %d bytes\n", *b.ArtifactType, *b.Size)
	}
	fmt.Fprintf(w, "source digest: %s\n", b.SourceDigest)
	finished := "not finished"
	if b.FinishedAt != nil {
		finished = "finished " + stamp(*b.FinishedAt)
	}
	fmt.Fprintf(w, "created %s, %s\n", stamp(b.CreatedAt), finished)
	if b.Error != nil && *b.Error != "" {
		fmt.Fprintf(w, "error: %s\n", *b.Error)
	}
}

func (c *cli) buildsStartCmd() *cobra.Command {
	var component string
	var wait bool
	cmd := c.withApp(&cobra.Command{
		Use:   "start --app APP --component C [--wait]",
		Short: "Build a component of the latest config version, unless a build of its source succeeded or runs",
		Long: "Build a component of the app's latest config version. A build of the same source that succeeded\n" +
			"or is under way is reused, not rebuilt. With --wait, follow the build until it finishes: exit code 6\n" +
			"if it failed. With -o json, the build as the API shows it (with --wait, once finished).",
		Args: cobra.NoArgs,
	}, func(ctx context.Context, a *api, app apiclient.App, _ []string) error {
		r, err := check(a.RebuildWithResponse(ctx, app.Id, apiclient.RebuildRequest{Component: component}))
		if err != nil {
			return err
		}
		b, how := r.JSON202, "queued"
		if r.StatusCode() == http.StatusOK {
			b, how = r.JSON200, "reused"
		}
		if !wait {
			if c.output == "json" {
				return c.printBody(r.Body)
			}
			fmt.Fprintf(c.stdout, "build %s of %s %s: %s\n", b.Id, b.Component, how, b.Status)
			return nil
		}
		return c.waitBuild(ctx, a, app, *b, how)
	})
	cmd.Flags().StringVar(&component, "component", "", "the component to build")
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the build until it finishes")
	_ = cmd.MarkFlagRequired("component")
	return cmd
}

// buildPoll is how often --wait asks for a build's status.
const buildPoll = time.Second

// waitBuild polls the build (queued or reused) until it finishes, printing
// each status change.
func (c *cli) waitBuild(ctx context.Context, a *api, app apiclient.App, b apiclient.Build, how string) error {
	progress := c.progressOut()
	fmt.Fprintf(progress, "build %s of %s %s\n", b.Id, b.Component, how)
	seen, body := apiclient.BuildStatus(""), []byte(nil)
	err := pollUntil(ctx, buildPoll, func() (bool, error) {
		r, err := check(a.GetBuildWithResponse(ctx, b.AppId, b.Id))
		if err != nil {
			return false, err
		}
		b, body = *r.JSON200, r.Body
		if b.Status != seen {
			seen = b.Status
			fmt.Fprintf(progress, "%s build %s of %s: %s\n", time.Now().Format("15:04:05"), b.Id, b.Component, b.Status)
		}
		return b.Status == apiclient.BuildStatusSucceeded || b.Status == apiclient.BuildStatusFailed, nil
	})
	if err != nil {
		return err
	}
	return c.builtOrFailed(app, b, body)
}

func (c *cli) builtOrFailed(app apiclient.App, b apiclient.Build, body []byte) error {
	var failed error
	if b.Status == apiclient.BuildStatusFailed {
		msg := ""
		if b.Error != nil {
			msg = ": " + strings.Join(strings.Fields(*b.Error), " ") // on the error's one line
		}
		failed = fail(exitOperation, "build %s of %s failed%s (`outpostctl builds show --app %s %s`)", b.Id, b.Component, msg, app.Name, b.Id)
	}
	return c.printEnded(body, func() {
		if b.Digest != nil {
			fmt.Fprintf(c.stdout, "artifact %s:%s@%s\n", b.Repository, b.Tag, *b.Digest)
		}
	}, failed)
}
