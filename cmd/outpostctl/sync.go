package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
	"github.com/outpost-dev/outpost/appconfig/configarchive"
)

func (c *cli) appsSyncCmd() *cobra.Command {
	var archive []byte
	return c.withApp(&cobra.Command{
		Use:   "sync DIR --app APP",
		Short: "Sync an app config from a directory",
		Long: "Sync the app config in DIR (docs/APP_CONFIG.md) as the app's next version. An invalid config\n" +
			"changes nothing: each problem is printed as file:key: message, one a line, and the exit code is 1.",
		Args: cobra.ExactArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) (err error) {
			if fi, err := os.Stat(args[0]); err != nil || !fi.IsDir() {
				return fail(exitUsage, "%s is not a directory", args[0])
			}
			if archive, err = configarchive.Pack(os.DirFS(args[0]), ".", nil); err != nil {
				return fail(exitUsage, "%w", err)
			}
			return nil
		},
	}, func(ctx context.Context, a *api, app apiclient.App, args []string) error {
		r, err := a.SyncAppConfigWithBodyWithResponse(ctx, app.Id, "application/gzip", bytes.NewReader(archive))
		if err == nil && r.StatusCode() == http.StatusUnprocessableEntity {
			return c.invalidConfig(args[0], r.Body)
		}
		if _, err := check(r, err); err != nil {
			return err
		}
		return c.synced(r.Body)
	})
}

// invalidConfig prints the API's problems, one a line, and is exit code 1.
func (c *cli) invalidConfig(dir string, body []byte) error {
	var inv apiclient.InvalidConfig
	if err := json.Unmarshal(body, &inv); err != nil {
		return fail(exitUsage, "the API refused the config in %s: %s", dir, body)
	}
	if c.output == "json" {
		if err := c.printBody(body); err != nil {
			return err
		}
	} else {
		for _, p := range inv.Errors {
			fmt.Fprintln(c.stderr, problemLine(p))
		}
	}
	return fail(exitUsage, "the config in %s has %d problem(s); nothing was changed", dir, len(inv.Errors))
}

// problemLine is file:key: message, leaving out what the problem lacks.
func problemLine(p apiclient.ConfigProblem) string {
	at := p.File
	if p.Key != "" {
		at += ":" + p.Key
	}
	if at == "" {
		return p.Message
	}
	return at + ": " + p.Message
}

func (c *cli) synced(body []byte) error {
	if c.output == "json" {
		return c.printBody(body)
	}
	var cfg apiclient.SyncedAppConfig
	if err := json.Unmarshal(body, &cfg); err != nil {
		return fmt.Errorf("read the API's answer: %w", err)
	}
	if cfg.Created != nil && !*cfg.Created {
		fmt.Fprintf(c.stdout, "app %s: unchanged, version %d is the latest\n", cfg.App.Name, cfg.Version)
	} else {
		fmt.Fprintf(c.stdout, "app %s: config version %d\n", cfg.App.Name, cfg.Version)
	}
	for _, b := range cfg.Builds {
		fmt.Fprintf(c.stdout, "  build %s %s: %s\n", b.Component, b.Id, b.Status)
	}
	return nil
}
