package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) inputsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "inputs", Short: "Change an install's inputs and list their versions"}
	cmd.AddCommand(c.inputsSetCmd(), c.inputsVersionsCmd())
	return cmd
}

func (c *cli) inputsSetCmd() *cobra.Command {
	var inputs, remove []string
	var inputFile string
	var apply, wait bool
	var timeout time.Duration
	var in map[string]string
	cmd := c.withInstall(&cobra.Command{
		Use:   "set INSTALL [--input name=value]... [--input-file FILE] [--remove NAME]... [--apply [--wait]]",
		Short: "Set, change or remove some of an install's inputs: a new inputs version",
		Long: "Send the change to the API, which checks it against the app's latest config (a wrong type, an\n" +
			"unknown input or a required one removed is refused, naming it, and nothing changes) and records it as\n" +
			"the install's next inputs version. Those the config declares sensitive are sent as sensitive and never\n" +
			"shown. With --apply, an update_inputs operation starts: only the steps whose rendered job changed are\n" +
			"planned and applied (under the install's approval mode), the others end unchanged; with --wait, follow it.",
		Args: cobra.ExactArgs(1),
		PreRunE: func(*cobra.Command, []string) (err error) {
			if in, err = parseInputs(inputs, inputFile); err != nil {
				return err
			}
			if len(in) == 0 && len(remove) == 0 {
				return fail(exitUsage, "nothing to change: give --input name=value, --input-file FILE or --remove NAME")
			}
			if wait && !apply {
				return fail(exitUsage, "--wait follows the operation --apply starts: give --apply too")
			}
			return nil
		},
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		set, err := a.inputRequests(ctx, inst.AppId, in)
		if err != nil {
			return err
		}
		r, err := check(a.PatchInstallInputsWithResponse(ctx, inst.Id, apiclient.UpdateInputsRequest{Set: &set, Remove: &remove, Apply: &apply}))
		if err != nil {
			return err
		}
		u := *r.JSON200
		if c.output == "json" && !wait {
			return c.printBody(r.Body)
		}
		if c.output != "json" {
			fmt.Fprintln(c.stdout, describeInputsChange(inst.Name, u))
		}
		if u.Operation == nil || !wait {
			return nil
		}
		ctx, cancel := withTimeout(ctx, timeout)
		defer cancel()
		return c.follow(ctx, a, inst, *u.Operation)
	})
	f := cmd.Flags()
	f.StringArrayVar(&inputs, "input", nil, "an input to set, name=value (repeat for more)")
	f.StringVar(&inputFile, "input-file", "", "a YAML or JSON file mapping input names to values to set")
	f.StringArrayVar(&remove, "remove", nil, "an input to remove, back to its default (repeat for more)")
	f.BoolVar(&apply, "apply", false, "start the update_inputs operation that applies the change")
	c.waitFlags(cmd, &wait, &timeout)
	return cmd
}

// describeInputsChange is the line `inputs set` prints.
func describeInputsChange(install string, u apiclient.UpdatedInputs) string {
	var b strings.Builder
	if u.Version.Version == 0 {
		fmt.Fprintf(&b, "install %s: no change (inputs version %d)", install, u.InputsVersion)
	} else {
		fmt.Fprintf(&b, "install %s: inputs version %d", install, u.InputsVersion)
		if len(u.Version.Set) > 0 {
			fmt.Fprintf(&b, ", set %s", strings.Join(u.Version.Set, ", "))
		}
		if len(u.Version.Removed) > 0 {
			fmt.Fprintf(&b, ", removed %s", strings.Join(u.Version.Removed, ", "))
		}
	}
	if op := u.Operation; op != nil {
		fmt.Fprintf(&b, "\n%s %s started (workflow %s)", op.Kind, op.Id, op.WorkflowId)
	}
	return b.String()
}

func (c *cli) inputsVersionsCmd() *cobra.Command {
	return c.installCmd("versions INSTALL", "List an install's inputs versions, newest first: which inputs each set or removed (never values)", 1,
		func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
			r, err := check(a.ListInputVersionsWithResponse(ctx, inst.Id))
			return printRows(c, r, err, "VERSION\tCREATED\tSET\tREMOVED", func() []apiclient.InputVersion { return r.JSON200.Versions },
				func(v apiclient.InputVersion) []string {
					return []string{strconv.Itoa(v.Version), v.CreatedAt.Local().Format(time.DateTime),
						strings.Join(v.Set, ","), strings.Join(v.Removed, ",")}
				})
		})
}
