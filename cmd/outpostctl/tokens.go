package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) tokensCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tokens", Short: "Create, list and revoke the org's API tokens"}
	cmd.AddCommand(c.tokensCreateCmd(), c.tokensListCmd(), c.tokensRevokeCmd())
	return cmd
}

func (c *cli) tokensCreateCmd() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "create --name NAME",
		Short: "Create an API token and print it, once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.api()
			if err != nil {
				return err
			}
			r, err := check(a.CreateTokenWithResponse(cmd.Context(), apiclient.CreateTokenRequest{Name: name}))
			return c.printAnswer(r, err, func() error {
				t := r.JSON201
				fmt.Fprintf(c.stdout, "token %s created: %s\ntoken (shown only now): %s\n", t.Name, t.Id, t.Token)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "what the token is for")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func (c *cli) tokensListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the org's API tokens (never their values)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.api()
			if err != nil {
				return err
			}
			r, err := check(a.ListTokensWithResponse(cmd.Context()))
			return c.printAnswer(r, err, func() error {
				var rows [][]string
				for _, t := range r.JSON200.Tokens {
					revoked := "-"
					if t.RevokedAt != nil {
						revoked = stamp(*t.RevokedAt)
					}
					rows = append(rows, []string{t.Name, t.Id, stamp(t.CreatedAt), revoked})
				}
				return table(c.stdout, "NAME\tID\tCREATED\tREVOKED", rows)
			})
		},
	}
}

func (c *cli) tokensRevokeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke TOKEN_ID",
		Short: "Revoke an API token: the API refuses it from now on",
		Long:  "Revoke an API token: the API refuses it from now on. With -o json, the token as listed then.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.api()
			if err != nil {
				return err
			}
			t, err := a.token(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if _, err := check(a.RevokeTokenWithResponse(cmd.Context(), t.Id)); err != nil {
				return err
			}
			if c.output != "json" {
				fmt.Fprintf(c.stdout, "token %s (%s) revoked\n", t.Name, t.Id)
				return nil
			}
			if now, err := a.token(cmd.Context(), t.Id); err == nil { // not when it was this context's own
				t = now
			}
			return c.printJSON(t)
		},
	}
}

// token finds an API token by ID.
func (a *api) token(ctx context.Context, id string) (apiclient.Token, error) {
	r, err := check(a.ListTokensWithResponse(ctx))
	if err != nil {
		return apiclient.Token{}, err
	}
	for _, t := range r.JSON200.Tokens {
		if t.Id == id {
			return t, nil
		}
	}
	return apiclient.Token{}, fail(exitNotFound, "no token %q (`outpostctl tokens list` shows them)", id)
}
