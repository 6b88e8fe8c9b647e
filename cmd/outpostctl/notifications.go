package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
	"github.com/outpost-dev/outpost/contract"
)

func (c *cli) notificationsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "notifications", Short: "Webhook and Slack subscriptions to the org's events, and their deliveries"}
	cmd.AddCommand(c.notificationsListCmd(), c.notificationsCreateCmd(), c.notificationsDeleteCmd(),
		c.notificationsDeliveriesCmd(), c.notificationsRedeliverCmd())
	return cmd
}

func (c *cli) notificationsListCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{Use: "list", Short: "List the org's subscriptions (never their secrets)", Args: cobra.NoArgs},
		func(ctx context.Context, a *api, _ []string) error {
			r, err := check(a.ListNotificationSubscriptionsWithResponse(ctx))
			return printRows(c, r, err, "NAME\tID\tCHANNEL\tEVENTS\tURL\tENABLED",
				func() []apiclient.NotificationSubscription { return r.JSON200.Subscriptions },
				func(s apiclient.NotificationSubscription) []string {
					return []string{s.Name, s.Id, s.Channel, strings.Join(s.EventTypes, ","), s.Url, strconv.FormatBool(s.Enabled)}
				})
		})
}

func (c *cli) notificationsCreateCmd() *cobra.Command {
	var req apiclient.CreateNotificationSubscriptionRequest
	var apps []string
	var selector string
	var offline int
	cmd := c.withAPI(&cobra.Command{
		Use:   "create --name NAME --event TYPE... --url URL [--channel webhook|slack] [--app APP_ID]... [--selector LABELS]",
		Short: "Subscribe a webhook or Slack URL to events; prints a webhook's signing secret, once",
		Long: "Event types: " + strings.Join(contract.EventTypes, ", ") + ". --app and --selector (Kubernetes label " +
			"selector) limit the installs whose events are sent; --runner-offline-minutes is how long an install's runner " +
			"is offline before runner.offline is sent (default 10).",
		Args: cobra.NoArgs,
	}, func(ctx context.Context, a *api, _ []string) error {
		if len(apps) > 0 {
			req.AppIds = &apps
		}
		if selector != "" {
			req.LabelSelector = &selector
		}
		if offline != 0 {
			req.RunnerOfflineMinutes = &offline
		}
		r, err := check(a.CreateNotificationSubscriptionWithResponse(ctx, req))
		return c.printAnswer(r, err, func() error {
			s := r.JSON201
			fmt.Fprintf(c.stdout, "subscription %s created: %s (%s to %s)\n", s.Name, s.Id, strings.Join(s.EventTypes, ","), s.Url)
			if s.Secret != nil {
				fmt.Fprintf(c.stdout, "signing secret (shown only now): %s\n", *s.Secret)
			}
			return nil
		})
	})
	cmd.Flags().StringVar(&req.Name, "name", "", "what the subscription is for")
	cmd.Flags().StringSliceVar(&req.EventTypes, "event", nil, "an event type (repeat, or comma-separate)")
	cmd.Flags().StringVar(&req.Url, "url", "", "where to POST (https; http only to loopback)")
	cmd.Flags().StringVar(&req.Channel, "channel", "webhook", "webhook (signed JSON) or slack ({\"text\": …})")
	cmd.Flags().StringSliceVar(&apps, "app", nil, "only this app's events (repeat)")
	cmd.Flags().StringVar(&selector, "selector", "", "only installs whose labels match (tier=gold,region in (eu,us))")
	cmd.Flags().IntVar(&offline, "runner-offline-minutes", 0, "runner.offline once a runner is offline this long (default 10)")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("url")
	return cmd
}

func (c *cli) notificationsDeleteCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{Use: "delete SUBSCRIPTION_ID", Short: "Delete a subscription and its deliveries", Args: cobra.ExactArgs(1)},
		func(ctx context.Context, a *api, args []string) error {
			if _, err := check(a.DeleteNotificationSubscriptionWithResponse(ctx, args[0])); err != nil {
				return err
			}
			if c.output == "json" {
				return c.printJSON(map[string]any{"id": args[0], "deleted": true})
			}
			fmt.Fprintf(c.stdout, "subscription %s deleted\n", args[0])
			return nil
		})
}

func (c *cli) notificationsDeliveriesCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{Use: "deliveries SUBSCRIPTION_ID", Short: "A subscription's deliveries, newest first, with their tries", Args: cobra.ExactArgs(1)},
		func(ctx context.Context, a *api, args []string) error {
			r, err := check(a.ListNotificationDeliveriesWithResponse(ctx, args[0], nil))
			return printRows(c, r, err, "ID\tEVENT\tSTATE\tTRIES\tCREATED", func() []apiclient.NotificationDelivery { return r.JSON200.Deliveries },
				func(d apiclient.NotificationDelivery) []string {
					var tries []string
					for _, t := range d.Attempts {
						tries = append(tries, attemptText(t))
					}
					return []string{d.Id, d.EventType, d.State, strings.Join(tries, "; "), stamp(d.CreatedAt)}
				})
		})
}

// attemptText is one try: its status code, or its error.
func attemptText(t apiclient.NotificationAttempt) string {
	if t.StatusCode != nil && *t.StatusCode != 0 {
		return fmt.Sprintf("#%d %d", t.Attempt, *t.StatusCode)
	}
	if t.Error != nil {
		return fmt.Sprintf("#%d %s", t.Attempt, *t.Error)
	}
	return fmt.Sprintf("#%d", t.Attempt)
}

func (c *cli) notificationsRedeliverCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{Use: "redeliver DELIVERY_ID", Short: "Send a delivery's event again, as a new delivery", Args: cobra.ExactArgs(1)},
		func(ctx context.Context, a *api, args []string) error {
			r, err := check(a.RedeliverNotificationWithResponse(ctx, args[0]))
			return c.printAnswer(r, err, func() error {
				fmt.Fprintf(c.stdout, "redelivering %s as %s\n", r.JSON202.EventId, r.JSON202.Id)
				return nil
			})
		})
}
