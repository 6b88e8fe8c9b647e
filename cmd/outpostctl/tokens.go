package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) tokensCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tokens", Short: "Create, list and revoke API tokens (scoped, expiring)"}
	cmd.AddCommand(c.tokensCreateCmd(), c.tokensListCmd(), c.tokensRevokeCmd())
	return cmd
}

func (c *cli) tokensCreateCmd() *cobra.Command {
	var name, expires, user string
	var scopes []string
	cmd := c.withAPI(&cobra.Command{
		Use:   "create --name NAME [--scope SCOPE]... [--expires 30d] [--user USER]",
		Short: "Create an API token and print it, once",
		Long: "Create an API token and print it, once. Its scopes (read, deploy, approve, exec, admin; each includes read) " +
			"limit it within its user's roles; without --scope it has admin: all its user's roles allow. --expires takes " +
			"days (30d) or a Go duration (12h); without it the token lasts until revoked. --user (admins only) makes it " +
			"for another user or service account (a name or ID).",
		Args: cobra.NoArgs,
	}, func(ctx context.Context, a *api, _ []string) error {
		req := apiclient.CreateTokenRequest{Name: name}
		if len(scopes) > 0 {
			req.Scopes = &scopes
		}
		if expires != "" {
			req.ExpiresIn = &expires
		}
		if user != "" {
			u, err := a.user(ctx, user)
			if err != nil {
				return err
			}
			req.UserId = &u.Id
		}
		r, err := check(a.CreateTokenWithResponse(ctx, req))
		return c.printAnswer(r, err, func() error {
			t := r.JSON201
			fmt.Fprintf(c.stdout, "token %s created: %s (scopes %s, expires %s)\ntoken (shown only now): %s\n",
				t.Name, t.Id, strings.Join(t.Scopes, ","), stampOr(t.ExpiresAt, "never"), t.Token)
			return nil
		})
	})
	cmd.Flags().StringVar(&name, "name", "", "what the token is for")
	cmd.Flags().StringSliceVar(&scopes, "scope", nil, "read, deploy, approve, exec or admin (repeat, or comma-separate)")
	cmd.Flags().StringVar(&expires, "expires", "", "how long it lasts: days (30d) or a Go duration (12h)")
	cmd.Flags().StringVar(&user, "user", "", "the user or service account it is for (admins only; default: you)")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func (c *cli) tokensListCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{
		Use:   "list",
		Short: "List API tokens (never their values): all the org's for an admin, your own otherwise",
		Args:  cobra.NoArgs,
	}, func(ctx context.Context, a *api, _ []string) error {
		r, err := check(a.ListTokensWithResponse(ctx))
		return printRows(c, r, err, "NAME\tID\tUSER\tSCOPES\tEXPIRES\tLAST USED\tCREATED\tREVOKED",
			func() []apiclient.Token { return r.JSON200.Tokens },
			func(t apiclient.Token) []string {
				user := "- (admin token from before users)"
				if t.UserId != nil && *t.UserId != "" {
					user = *t.UserId
				}
				return []string{t.Name, t.Id, user, strings.Join(t.Scopes, ","), stampOr(t.ExpiresAt, "never"),
					stampOr(t.LastUsedAt, "never"), stamp(t.CreatedAt), stampOr(t.RevokedAt, "-")}
			})
	})
}

// stampOr is t's stamp, or none when t is nil.
func stampOr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return stamp(*t)
}

func (c *cli) tokensRevokeCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{
		Use:   "revoke TOKEN_ID",
		Short: "Revoke an API token: the API refuses it from now on",
		Long:  "Revoke an API token: the API refuses it from now on. With -o json, the token as listed then.",
		Args:  cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, args []string) error {
		t, err := a.token(ctx, args[0])
		if err != nil {
			return err
		}
		if _, err := check(a.RevokeTokenWithResponse(ctx, t.Id)); err != nil {
			return err
		}
		if c.output != "json" {
			fmt.Fprintf(c.stdout, "token %s (%s) revoked\n", t.Name, t.Id)
			return nil
		}
		if now, err := a.token(ctx, t.Id); err == nil { // not when it was this context's own
			t = now
		}
		return c.printJSON(t)
	})
}

// token finds an API token by ID.
func (a *api) token(ctx context.Context, id string) (apiclient.Token, error) {
	r, err := check(a.ListTokensWithResponse(ctx))
	if err != nil {
		return apiclient.Token{}, err
	}
	return findIn(r.JSON200.Tokens, func(t apiclient.Token) bool { return t.Id == id },
		"no token %q (`outpostctl tokens list` shows them)", id)
}
