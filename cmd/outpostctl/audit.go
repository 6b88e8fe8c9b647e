package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) auditCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "The org's audit log: who changed what, when, and how it ended"}
	cmd.AddCommand(c.auditListCmd())
	return cmd
}

func (c *cli) auditListCmd() *cobra.Command {
	var p apiclient.ListAuditEventsParams
	var token, action, object, since, before string
	var limit int
	cmd := c.withAPI(&cobra.Command{
		Use:   "list [--token ID] [--action ACTION] [--object ID] [--since TIME|DURATION] [--limit N] [--before EVENT_ID]",
		Short: "List the org's changing calls, refused ones too, newest first",
		Long: "List the org's changing calls, refused ones too, newest first: the API token (name and ID), the action " +
			"(the API's operation id), the objects it named or made, the status and a failure's error code. A full page " +
			"ends with the --before that continues it.",
		Args: cobra.NoArgs,
	}, func(ctx context.Context, a *api, _ []string) error {
		var err error
		if p.Since, err = sinceParam(since); err != nil {
			return err
		}
		p.TokenId, p.Action, p.ObjectId, p.Before = optional(token), optional(action), optional(object), optional(before)
		if limit > 0 {
			p.Limit = &limit
		}
		r, err := check(a.ListAuditEventsWithResponse(ctx, &p))
		return c.printAnswer(r, err, func() error {
			return c.printAudit(*r.JSON200)
		})
	})
	f := cmd.Flags()
	f.StringVar(&token, "token", "", "only the calls made with this API token (its ID)")
	f.StringVar(&action, "action", "", "only the calls of this action (createApp, approveStep, …)")
	f.StringVar(&object, "object", "", "only the calls that named or made this object (an ID, a step or a component name)")
	f.StringVar(&since, "since", "", "only the calls since this time (RFC 3339) or this long ago (24h)")
	f.IntVar(&limit, "limit", 0, "how many (1-200, default 50)")
	f.StringVar(&before, "before", "", "the events older than this one (the last of the previous page)")
	return cmd
}

// sinceParam reads --since: a time, or a duration back from now.
func sinceParam(v string) (*string, error) {
	if v == "" {
		return nil, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		t := time.Now().Add(-d).UTC().Format(time.RFC3339)
		return &t, nil
	}
	if _, err := time.Parse(time.RFC3339, v); err != nil {
		return nil, fail(exitUsage, "--since %q: want a time (2026-05-01T12:00:00Z) or a duration (24h)", v)
	}
	return &v, nil
}

func (c *cli) printAudit(page apiclient.AuditEventList) error {
	var rows [][]string
	for _, ev := range page.Events {
		outcome := fmt.Sprint(ev.Status)
		if ev.ErrorCode != nil && *ev.ErrorCode != "" {
			outcome += " " + *ev.ErrorCode
		}
		var objects []string
		for _, k := range slices.Sorted(maps.Keys(ev.Objects)) {
			objects = append(objects, k+"="+ev.Objects[k])
		}
		rows = append(rows, []string{stamp(ev.At), ev.TokenName + " (" + ev.TokenId + ", " + ev.Via + ")", ev.Action,
			outcome, strings.Join(objects, " ")})
	}
	if err := table(c.stdout, "TIME\tTOKEN\tACTION\tSTATUS\tOBJECTS", rows); err != nil {
		return err
	}
	if page.NextBefore != nil && *page.NextBefore != "" {
		fmt.Fprintf(c.stdout, "more: --before %s\n", *page.NextBefore)
	}
	return nil
}
