package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) windowsCmd() *cobra.Command {
	var set string
	var clear bool
	cmd := c.withInstall(&cobra.Command{
		Use:   "windows INSTALL [--set JSON | --clear]",
		Short: "Show or set the install's maintenance windows",
		Long: "Show the install's maintenance windows and the one open now or next; --set replaces them with a\n" +
			"JSON window or list of windows, e.g.\n" +
			`  --set '{"days": ["sat","sun"], "start": "02:00", "duration": "4h", "time_zone": "Europe/Berlin"}'` + "\n" +
			"--clear removes them (work may then run at any time). Work the platform starts on its own (a drift\n" +
			"reconcile, a release) waits for the next window; an operation you start runs at once.",
		Args: cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		var body []byte
		var shown *apiclient.MaintenanceWindows
		if set != "" || clear {
			ws, err := parseWindows(set)
			if err != nil {
				return err
			}
			r, err := check(a.SetMaintenanceWindowsWithResponse(ctx, inst.Id, apiclient.MaintenanceWindowsRequest{Windows: ws}))
			if err != nil {
				return err
			}
			body, shown = r.Body, r.JSON200
		} else {
			r, err := check(a.GetMaintenanceWindowsWithResponse(ctx, inst.Id))
			if err != nil {
				return err
			}
			body, shown = r.Body, r.JSON200
		}
		if c.output == "json" {
			return c.printBody(body)
		}
		return c.printWindows(inst.Name, *shown)
	})
	cmd.Flags().StringVar(&set, "set", "", "the windows, as a JSON object or list of objects (days, start, duration, time_zone)")
	cmd.Flags().BoolVar(&clear, "clear", false, "remove every window")
	cmd.MarkFlagsMutuallyExclusive("set", "clear")
	return cmd
}

// parseWindows reads --set: one window or a list ("" is none).
func parseWindows(v string) ([]apiclient.MaintenanceWindow, error) {
	ws := []apiclient.MaintenanceWindow{}
	v = strings.TrimSpace(v)
	var err error
	switch {
	case v == "":
	case strings.HasPrefix(v, "["):
		err = json.Unmarshal([]byte(v), &ws)
	default:
		var w apiclient.MaintenanceWindow
		err = json.Unmarshal([]byte(v), &w)
		ws = append(ws, w)
	}
	if err != nil {
		return nil, fail(exitUsage, "--set: not a JSON window or list of windows: %v", err)
	}
	return ws, nil
}

func (c *cli) printWindows(install string, w apiclient.MaintenanceWindows) error {
	if len(w.Windows) == 0 {
		fmt.Fprintf(c.stdout, "install %s has no maintenance windows: work may run at any time\n", install)
		return nil
	}
	var rows [][]string
	for _, x := range w.Windows {
		rows = append(rows, []string{strings.Join(x.Days, ","), x.Start, x.Duration, x.TimeZone})
	}
	if err := table(c.stdout, "DAYS\tSTART\tDURATION\tTIME ZONE", rows); err != nil {
		return err
	}
	if n := w.Next; n != nil && n.Open {
		fmt.Fprintf(c.stdout, "open now, until %s\n", n.End.UTC().Format(time.RFC3339))
	} else if n != nil {
		fmt.Fprintf(c.stdout, "next window: %s until %s\n", n.Start.UTC().Format(time.RFC3339), n.End.UTC().Format(time.RFC3339))
	}
	return nil
}
