package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/internal/cliconfig"
)

func (c *cli) contextCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "context", Short: "Manage contexts: named API URLs and where their tokens are"}
	cmd.AddCommand(c.contextAddCmd(), c.contextUseCmd(), c.contextListCmd())
	return cmd
}

func (c *cli) contextAddCmd() *cobra.Command {
	var ctx cliconfig.Context
	cmd := &cobra.Command{
		Use:   "add NAME --api URL [--token-file FILE]",
		Short: "Add or replace a context (current if none is)",
		Long: "Add or replace a context. Its token is read from --token-file at each call; without one,\n" +
			"from the environment variable OUTPOST_TOKEN. The token itself is never stored nor printed.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx.Name = args[0]
			if u, err := url.Parse(ctx.API); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fail(exitUsage, "--api %q: want an http(s) URL such as http://127.0.0.1:8080", ctx.API)
			}
			if ctx.TokenFile != "" {
				abs, err := filepath.Abs(ctx.TokenFile)
				if err != nil {
					return fail(exitUsage, "--token-file: %w", err)
				}
				if _, err := os.Stat(abs); err != nil {
					return fail(exitUsage, "--token-file: %w", err)
				}
				ctx.TokenFile = abs
			}
			path, conf, err := loadConfig()
			if err != nil {
				return err
			}
			conf.Put(ctx)
			if conf.Current == "" {
				conf.Current = ctx.Name
			}
			if err := conf.Save(path); err != nil {
				return fail(exitUsage, "%w", err)
			}
			fmt.Fprintf(c.stderr, "context %s: %s\n", ctx.Name, ctx.API)
			return nil
		},
	}
	cmd.Flags().StringVar(&ctx.API, "api", "", "the API's URL (without /v1)")
	cmd.Flags().StringVar(&ctx.TokenFile, "token-file", "", "a file holding the API token (default: $OUTPOST_TOKEN)")
	_ = cmd.MarkFlagRequired("api")
	return cmd
}

func (c *cli) contextUseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "use NAME",
		Short: "Make a context the current one",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, conf, err := loadConfig()
			if err != nil {
				return err
			}
			if _, ok := conf.Find(args[0]); !ok {
				return fail(exitUsage, "no context %q: `outpostctl context list` shows them", args[0])
			}
			conf.Current = args[0]
			if err := conf.Save(path); err != nil {
				return fail(exitUsage, "%w", err)
			}
			return nil
		},
	}
}

func (c *cli) contextListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the contexts (never their tokens)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, conf, err := loadConfig()
			if err != nil {
				return err
			}
			if c.output == "json" {
				return c.printJSON(conf)
			}
			var rows [][]string
			for _, x := range conf.Contexts {
				cur, tok := "", x.TokenFile
				if x.Name == conf.Current {
					cur = "*"
				}
				if tok == "" {
					tok = "$OUTPOST_TOKEN"
				}
				rows = append(rows, []string{cur, x.Name, x.API, tok})
			}
			return table(c.stdout, "CURRENT\tNAME\tAPI\tTOKEN", rows)
		},
	}
}

// loadConfig reads the contexts file.
func loadConfig() (string, cliconfig.Config, error) {
	path, err := cliconfig.Path()
	if err != nil {
		return "", cliconfig.Config{}, fail(exitUsage, "%w", err)
	}
	conf, err := cliconfig.Load(path)
	if err != nil {
		return "", conf, fail(exitUsage, "%w", err)
	}
	return path, conf, nil
}
