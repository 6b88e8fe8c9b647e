package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

// opKind is an operation the CLI starts: its command and its API call.
type opKind struct {
	name, short string
	component   bool // takes a COMPONENT argument and --with-dependents
	versioned   bool // COMPONENT is optional: without it, the whole install, to --config-version
	start       func(ctx context.Context, a *api, inst string, o opOptions) (answer, error)
}

// opOptions are what a command passes to its operation.
type opOptions struct {
	comp    string // the component, if the command names one
	req     apiclient.OperationRequest
	version *int // --config-version, when given
}

// call turns a generated call's typed answer into an answer.
func call[R answer](r R, err error) (answer, error) { return r, err }

var (
	opProvision = opKind{name: "provision", short: "Provision an install: its sandbox, then every component",
		start: func(ctx context.Context, a *api, inst string, o opOptions) (answer, error) {
			return call(a.ProvisionInstallWithResponse(ctx, inst, o.req))
		}}
	opDeprovision = opKind{name: "deprovision", short: "Deprovision an install: every component, then its sandbox",
		start: func(ctx context.Context, a *api, inst string, o opOptions) (answer, error) {
			return call(a.DeprovisionInstallWithResponse(ctx, inst, o.req))
		}}
	opReprovision = opKind{name: "reprovision", short: "Plan and apply the sandbox and every component again (no changes, no apply)",
		start: func(ctx context.Context, a *api, inst string, o opOptions) (answer, error) {
			return call(a.ReprovisionInstallWithResponse(ctx, inst, o.req))
		}}
	opDeploy = opKind{name: "deploy", component: true, versioned: true,
		short: "Bring the install to a config version (default: the latest), or deploy one component (--with-dependents: then those that depend on it)",
		start: func(ctx context.Context, a *api, inst string, o opOptions) (answer, error) {
			if o.comp == "" {
				return call(a.DeployConfigWithResponse(ctx, inst, apiclient.DeployConfigRequest{ConfigVersion: o.version, PlanOnly: o.req.PlanOnly,
					InMaintenanceWindow: o.req.InMaintenanceWindow}))
			}
			return call(a.DeployComponentWithResponse(ctx, inst, o.comp, o.req))
		}}
	opTeardown = opKind{name: "teardown", component: true, short: "Tear one component down (--with-dependents: those that depend on it first)",
		start: func(ctx context.Context, a *api, inst string, o opOptions) (answer, error) {
			return call(a.TeardownComponentWithResponse(ctx, inst, o.comp, o.req))
		}}
	opUpdateInputs = opKind{name: "update-inputs", short: "Apply the install's inputs: plan and apply only the steps whose rendered job changed",
		start: func(ctx context.Context, a *api, inst string, o opOptions) (answer, error) {
			return call(a.UpdateInputsWithResponse(ctx, inst, o.req))
		}}
)

// operationCmd starts an operation of kind k, and with --wait follows it.
func (c *cli) operationCmd(k opKind) *cobra.Command {
	var wait, dependents, planOnly, inWindow, forget bool
	var version int
	var timeout time.Duration
	use, args := k.name+" INSTALL [--wait]", cobra.ExactArgs(1)
	switch {
	case k.versioned:
		use, args = k.name+" INSTALL [COMPONENT [--with-dependents] | --config-version N] [--wait]", cobra.RangeArgs(1, 2)
	case k.component:
		use, args = k.name+" INSTALL COMPONENT [--with-dependents] [--wait]", cobra.ExactArgs(2)
	}
	var o opOptions
	cmd := c.withInstall(&cobra.Command{
		Use:   use,
		Short: k.short,
		Long: "Start the operation and print its ID; with --wait, follow it: on a terminal, a tree of its steps\n" +
			"updated in place (status, time, the running job's last log line, a plan waiting for approval), else\n" +
			"a line per change of a step's status; then a summary (exit code 6 unless it succeeded). Ctrl-C\n" +
			"detaches (exit 130; `outpostctl wait` follows it again), or with --cancel-on-interrupt cancels it.\n" +
			"With -o json, the operation as the API shows it (with --wait, once it has finished; the progress\n" +
			"lines go to stderr).",
		Args: args,
		PreRunE: func(cmd *cobra.Command, args []string) (err error) {
			if o, err = c.opOptions(cmd, k, args, dependents, planOnly, version); err != nil {
				return err
			}
			if inWindow {
				o.req.InMaintenanceWindow = &inWindow
			}
			if forget {
				if planOnly {
					return fail(exitUsage, "--forget does not go with --plan-only: a plan destroys nothing, so leaves nothing behind")
				}
				o.req.Forget = &forget
			}
			return nil
		},
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		var err error
		if o.comp != "" {
			if o.comp, err = a.component(ctx, inst, o.comp); err != nil {
				return err
			}
		}
		op, body, err := a.startOperation(ctx, k, inst.Id, o)
		if err != nil {
			return err
		}
		if !wait {
			if c.output == "json" {
				return c.printBody(body)
			}
			fmt.Fprintf(c.stdout, "%s %s started on install %s (workflow %s)\n", op.Kind, op.Id, inst.Name, op.WorkflowId)
			return nil
		}
		ctx, cancel := withTimeout(ctx, timeout)
		defer cancel()
		return c.follow(ctx, a, inst, op)
	})
	c.waitFlags(cmd, &wait, &timeout)
	f := cmd.Flags()
	f.BoolVar(&planOnly, "plan-only", false, "plan the steps and stop: nothing is applied")
	f.BoolVar(&inWindow, "in-maintenance-window", false, "wait for the install's next maintenance window before running (the operation holds the install meanwhile)")
	if k.component {
		f.BoolVar(&dependents, "with-dependents", false, map[string]string{
			"deploy":   "then deploy the components that depend on it",
			"teardown": "first tear down the components that depend on it"}[k.name])
	}
	if k.name == opDeprovision.name {
		f.BoolVar(&forget, "forget", false, "for an install whose account changed under it: a step that cannot destroy does not fail the "+
			"deprovision but is left behind (what is left is named on it) and forgotten; the install ends deprovisioned")
	}
	if k.versioned {
		f.IntVar(&version, "config-version", 0, "without COMPONENT: the app config version to bring the install to (default: the latest; an earlier one rolls back)")
	}
	return cmd
}

// opOptions checks the flags that go together and makes the operation's
// options.
func (c *cli) opOptions(cmd *cobra.Command, k opKind, args []string, dependents, planOnly bool, version int) (opOptions, error) {
	var o opOptions
	if len(args) == 2 {
		o.comp = args[1]
	}
	switch {
	case o.comp != "" && cmd.Flags().Changed("config-version"):
		return o, fail(exitUsage, "--config-version brings the whole install to a version: leave out COMPONENT (%s)", o.comp)
	case o.comp == "" && dependents:
		return o, fail(exitUsage, "--with-dependents goes with a COMPONENT")
	case cmd.Flags().Changed("config-version") && version < 1:
		return o, fail(exitUsage, "--config-version %d: want a version (1, 2, …), or leave it out for the latest", version)
	}
	if cmd.Flags().Changed("config-version") {
		o.version = &version
	}
	if dependents {
		o.req.WithDependents = &dependents
	}
	if planOnly {
		o.req.PlanOnly = &planOnly
	}
	return o, nil
}

func (a *api) startOperation(ctx context.Context, k opKind, installID string, o opOptions) (apiclient.Operation, []byte, error) {
	r, err := check(k.start(ctx, a, installID, o))
	if err != nil {
		return apiclient.Operation{}, nil, err
	}
	var op apiclient.Operation
	if err := json.Unmarshal(r.GetBody(), &op); err != nil {
		return op, nil, fmt.Errorf("read the API's answer: %w", err)
	}
	return op, r.GetBody(), nil
}

// component checks that the app's latest config has the component (the API
// would accept any name and fail the operation later).
func (a *api) component(ctx context.Context, inst apiclient.Install, name string) (string, error) {
	r, err := check(a.GetAppConfigWithResponse(ctx, inst.AppId, "latest"))
	if e, ok := errors.AsType[*apiError](err); ok && e.Status == http.StatusNotFound {
		return name, nil // no config yet: the API says so
	}
	if err != nil {
		return "", err
	}
	var names []string
	for _, comp := range r.JSON200.Components {
		if comp.Name == name {
			return name, nil
		}
		names = append(names, comp.Name)
	}
	return "", fail(exitNotFound, "no component %q in the latest config (version %d) of install %s's app (components: %s)",
		name, r.JSON200.Version, inst.Name, strings.Join(names, ", "))
}
