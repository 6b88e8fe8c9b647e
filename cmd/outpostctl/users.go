package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) usersCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "users", Short: "The org's users and service accounts, and their roles (admins only)"}
	cmd.AddCommand(c.usersListCmd(), c.usersCreateCmd(), c.usersRoleCmd())
	return cmd
}

// rolesHelp says how --role is written.
const rolesHelp = "a role: admin, operator, approver or viewer; ROLE:APP limits it to an app (its name or ID) (repeat for more)"

func (c *cli) usersListCmd() *cobra.Command {
	return c.withAPI(&cobra.Command{Use: "list", Short: "List the org's users and service accounts, with their roles", Args: cobra.NoArgs},
		func(ctx context.Context, a *api, _ []string) error {
			r, err := check(a.ListUsersWithResponse(ctx))
			return printRows(c, r, err, "NAME\tID\tKIND\tROLES\tCREATED\tDISABLED", func() []apiclient.User { return r.JSON200.Users },
				func(u apiclient.User) []string {
					return []string{u.Name, u.Id, u.Kind, rolesText(u.Roles), stamp(u.CreatedAt), stampOr(u.DisabledAt, "-")}
				})
		})
}

func (c *cli) usersCreateCmd() *cobra.Command {
	var roles []string
	var email, passwordFile string
	var service bool
	cmd := c.withAPI(&cobra.Command{
		Use:   "create NAME --role ROLE[:APP]... [--password-file FILE] [--service]",
		Short: "Add a user (a person) or a service account (--service: API tokens only) to the org",
		Long: "Add a user or a service account to the org. A person signs in to the dashboard with the password read " +
			"from --password-file (at least 12 characters); without it, only with API tokens an admin makes for them " +
			"(`outpostctl tokens create --user NAME`).",
		Args: cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, args []string) error {
		req := apiclient.CreateUserRequest{Name: args[0]}
		var err error
		if req.Roles, err = a.roleBindings(ctx, roles); err != nil {
			return err
		}
		if email != "" {
			req.Email = &email
		}
		if service {
			kind := "service"
			req.Kind = &kind
		}
		if passwordFile != "" {
			b, err := os.ReadFile(passwordFile)
			if err != nil {
				return fail(exitUsage, "--password-file: %w", err)
			}
			pw := strings.TrimRight(string(b), "\r\n")
			req.Password = &pw
		}
		r, err := check(a.CreateUserWithResponse(ctx, req))
		return c.printAnswer(r, err, func() error {
			u := r.JSON201
			fmt.Fprintf(c.stdout, "%s %s created: %s (%s)\n", u.Kind, u.Name, u.Id, rolesText(u.Roles))
			return nil
		})
	})
	cmd.Flags().StringArrayVar(&roles, "role", nil, rolesHelp)
	cmd.Flags().StringVar(&email, "email", "", "the person's email")
	cmd.Flags().StringVar(&passwordFile, "password-file", "", "a file holding the person's dashboard password")
	cmd.Flags().BoolVar(&service, "service", false, "a service account (API tokens only, no sign-in)")
	_ = cmd.MarkFlagRequired("role")
	return cmd
}

func (c *cli) usersRoleCmd() *cobra.Command {
	var roles []string
	cmd := c.withAPI(&cobra.Command{
		Use:   "role USER --role ROLE[:APP]...",
		Short: "Replace a user's roles (USER: a name or ID)",
		Long:  "Replace a user's roles. It takes effect at once on the replica that answers, within 10 seconds on the others.",
		Args:  cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, args []string) error {
		u, err := a.user(ctx, args[0])
		if err != nil {
			return err
		}
		bindings, err := a.roleBindings(ctx, roles)
		if err != nil {
			return err
		}
		r, err := check(a.SetUserRolesWithResponse(ctx, u.Id, apiclient.SetRolesRequest{Roles: bindings}))
		return c.printAnswer(r, err, func() error {
			fmt.Fprintf(c.stdout, "%s now has roles %s\n", r.JSON200.Name, rolesText(r.JSON200.Roles))
			return nil
		})
	})
	cmd.Flags().StringArrayVar(&roles, "role", nil, rolesHelp)
	_ = cmd.MarkFlagRequired("role")
	return cmd
}

// roleBindings reads --role values: ROLE, or ROLE:APP with APP an app's
// name or ID.
func (a *api) roleBindings(ctx context.Context, roles []string) ([]apiclient.RoleBinding, error) {
	out := []apiclient.RoleBinding{}
	for _, v := range roles {
		role, app, limited := strings.Cut(v, ":")
		b := apiclient.RoleBinding{Role: role}
		if limited {
			found, err := a.app(ctx, app)
			if err != nil {
				return nil, err
			}
			b.AppId = &found.Id
		}
		out = append(out, b)
	}
	return out, nil
}

// rolesText shows roles as ROLE or ROLE:APP_ID, comma-separated.
func rolesText(roles []apiclient.RoleBinding) string {
	var out []string
	for _, b := range roles {
		if b.AppId != nil && *b.AppId != "" {
			out = append(out, b.Role+":"+*b.AppId)
		} else {
			out = append(out, b.Role)
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ",")
}

// user finds a user by name or ID.
func (a *api) user(ctx context.Context, ref string) (apiclient.User, error) {
	r, err := check(a.ListUsersWithResponse(ctx))
	if err != nil {
		return apiclient.User{}, err
	}
	return findIn(r.JSON200.Users, func(u apiclient.User) bool { return u.Id == ref || u.Name == ref },
		"no user %q (`outpostctl users list` shows them)", ref)
}
