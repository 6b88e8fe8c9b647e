package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) configsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "configs", Short: "List, show and compare an app's config versions"}
	cmd.AddCommand(c.configsListCmd(), c.configsShowCmd(), c.configsDiffCmd())
	return cmd
}

// appFlag is the required --app flag of a command about one app.
func appFlag(cmd *cobra.Command, ref *string) {
	cmd.Flags().StringVar(ref, "app", "", "the app, by name or ID")
	_ = cmd.MarkFlagRequired("app")
}

func (c *cli) configsListCmd() *cobra.Command {
	return c.withApp(&cobra.Command{Use: "list --app APP", Short: "List an app's config versions, newest first", Args: cobra.NoArgs},
		func(ctx context.Context, a *api, app apiclient.App, _ []string) error {
			r, err := check(a.ListAppConfigsWithResponse(ctx, app.Id))
			return printRows(c, r, err, "VERSION\tCREATED", func() []apiclient.ConfigVersion { return r.JSON200.Configs },
				func(v apiclient.ConfigVersion) []string { return []string{fmt.Sprint(v.Version), stamp(v.CreatedAt)} })
		})
}

func (c *cli) configsShowCmd() *cobra.Command {
	return c.withApp(&cobra.Command{
		Use:   "show --app APP [VERSION|latest]",
		Short: "Show a config version as the API validated it (default: the latest)",
		Args:  cobra.MaximumNArgs(1),
	}, func(ctx context.Context, a *api, app apiclient.App, args []string) error {
		version := "latest"
		if len(args) == 1 {
			version = args[0]
		}
		v, err := a.config(ctx, app, version)
		if err != nil {
			return err
		}
		if c.output == "json" {
			return c.printBody(v.body)
		}
		fmt.Fprintf(c.stdout, "app %s, config version %d, synced %s\n", app.Name, v.Version, stamp(v.CreatedAt))
		_, err = fmt.Fprint(c.stdout, strings.Join(v.lines(), ""))
		return err
	})
}

// configDiff is what `configs diff -o json` prints: the two versions as the
// API shows them, and the unified diff of their renderings.
type configDiff struct {
	From json.RawMessage `json:"from"`
	To   json.RawMessage `json:"to"`
	Diff string          `json:"diff"`
}

func (c *cli) configsDiffCmd() *cobra.Command {
	return c.withApp(&cobra.Command{
		Use:   "diff --app APP V1 V2",
		Short: "Compare two config versions (numbers, or latest), as a unified diff",
		Long: "Compare two config versions as `configs show` renders them: app, sandbox, inputs, components,\n" +
			"levels, files, and the digest of each built component's source (which changes with its module or\n" +
			"chart). Prints \"no differences\" when they are the same; the exit code is 0 either way.",
		Args: cobra.ExactArgs(2),
	}, func(ctx context.Context, a *api, app apiclient.App, args []string) error {
		from, err := a.config(ctx, app, args[0])
		if err != nil {
			return err
		}
		to, err := a.config(ctx, app, args[1])
		if err != nil {
			return err
		}
		diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: from.lines(), B: to.lines(), Context: 3,
			FromFile: fmt.Sprintf("%s version %d", app.Name, from.Version),
			ToFile:   fmt.Sprintf("%s version %d", app.Name, to.Version),
		})
		if err != nil {
			return fmt.Errorf("diff: %w", err)
		}
		switch {
		case c.output == "json":
			return c.printJSON(configDiff{From: from.body, To: to.body, Diff: diff})
		case diff == "":
			fmt.Fprintf(c.stdout, "no differences between versions %d and %d\n", from.Version, to.Version)
		default:
			fmt.Fprint(c.stdout, diff)
		}
		return nil
	})
}

// configVersion is a config version as the API shows it (body), and the
// builds it uses.
type configVersion struct {
	apiclient.AppConfig
	body   []byte
	builds []apiclient.Build
}

// config gets a config version of the app and the builds it uses.
func (a *api) config(ctx context.Context, app apiclient.App, version string) (configVersion, error) {
	r, err := check(a.GetAppConfigWithResponse(ctx, app.Id, version))
	if err = notFound(err, "app %s has no config version %s (`outpostctl configs list --app %s` shows them)",
		app.Name, version, app.Name); err != nil {
		return configVersion{}, err
	}
	n := strconv.Itoa(r.JSON200.Version)
	b, err := check(a.ListBuildsWithResponse(ctx, app.Id, &apiclient.ListBuildsParams{ConfigVersion: &n}))
	if err != nil {
		return configVersion{}, err
	}
	return configVersion{AppConfig: *r.JSON200, body: r.Body, builds: b.JSON200.Builds}, nil
}

// lines render a config version, one fact a line (each ending in a
// newline), in the API's order: what `configs show` prints and `configs
// diff` compares.
func (cfg configVersion) lines() []string {
	l := []string{fmt.Sprintf("app: %s\n", cfg.App.Name), fmt.Sprintf("description: %s\n", cfg.App.Description),
		fmt.Sprintf("sandbox: %s\n", cfg.Sandbox.Source), "inputs:\n"}
	for _, in := range cfg.Inputs {
		facts := []string{string(in.Type)}
		if in.Required {
			facts = append(facts, "required")
		}
		if in.Sensitive {
			facts = append(facts, "sensitive")
		}
		if in.Default != nil {
			b, _ := json.Marshal(in.Default)
			facts = append(facts, "default "+string(b))
		}
		line := fmt.Sprintf("  %s: %s", in.Name, strings.Join(facts, ", "))
		if in.Description != nil && *in.Description != "" {
			line += " — " + *in.Description
		}
		l = append(l, line+"\n")
	}
	return append(l, cfg.componentLines()...)
}

// componentLines are the components, their levels, the files and the digest
// of each built component's source.
func (cfg configVersion) componentLines() []string {
	l := []string{"components:\n"}
	for _, comp := range cfg.Components {
		line := fmt.Sprintf("  %s: %s in %s", comp.Name, comp.Type, comp.File)
		if comp.Source != nil {
			line += ", source " + *comp.Source
		}
		if comp.Image != nil {
			line += ", image " + *comp.Image
		}
		if len(comp.Dependencies) > 0 {
			line += ", after " + strings.Join(comp.Dependencies, ", ")
		}
		l = append(l, line+"\n")
	}
	l = append(l, "levels:\n")
	for i, level := range cfg.Levels {
		l = append(l, fmt.Sprintf("  %d: %s\n", i+1, strings.Join(level, ", ")))
	}
	l = append(l, "files:\n")
	for _, f := range cfg.Files {
		l = append(l, "  "+f+"\n")
	}
	l = append(l, "built sources:\n")
	for _, b := range cfg.builds {
		l = append(l, fmt.Sprintf("  %s: %s\n", b.Component, b.SourceDigest))
	}
	return l
}

// stamp is a time as the CLI prints it: UTC, to the second.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
