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
	start       func(ctx context.Context, a *api, inst, comp string, req apiclient.OperationRequest) (answer, error)
}

// call turns a generated call's typed answer into an answer.
func call[R answer](r R, err error) (answer, error) { return r, err }

var (
	opProvision = opKind{name: "provision", short: "Provision an install: its sandbox, then every component",
		start: func(ctx context.Context, a *api, inst, _ string, req apiclient.OperationRequest) (answer, error) {
			return call(a.ProvisionInstallWithResponse(ctx, inst, req))
		}}
	opDeprovision = opKind{name: "deprovision", short: "Deprovision an install: every component, then its sandbox",
		start: func(ctx context.Context, a *api, inst, _ string, req apiclient.OperationRequest) (answer, error) {
			return call(a.DeprovisionInstallWithResponse(ctx, inst, req))
		}}
	opReprovision = opKind{name: "reprovision", short: "Plan and apply the sandbox and every component again (no changes, no apply)",
		start: func(ctx context.Context, a *api, inst, _ string, req apiclient.OperationRequest) (answer, error) {
			return call(a.ReprovisionInstallWithResponse(ctx, inst, req))
		}}
	opDeploy = opKind{name: "deploy", component: true, short: "Deploy one component (--with-dependents: then those that depend on it)",
		start: func(ctx context.Context, a *api, inst, comp string, req apiclient.OperationRequest) (answer, error) {
			return call(a.DeployComponentWithResponse(ctx, inst, comp, req))
		}}
	opTeardown = opKind{name: "teardown", component: true, short: "Tear one component down (--with-dependents: those that depend on it first)",
		start: func(ctx context.Context, a *api, inst, comp string, req apiclient.OperationRequest) (answer, error) {
			return call(a.TeardownComponentWithResponse(ctx, inst, comp, req))
		}}
	opUpdateInputs = opKind{name: "update-inputs", short: "Apply the install's inputs: plan and apply only the steps whose rendered job changed",
		start: func(ctx context.Context, a *api, inst, _ string, req apiclient.OperationRequest) (answer, error) {
			return call(a.UpdateInputsWithResponse(ctx, inst, req))
		}}
)

// operationCmd starts an operation of kind k, and with --wait follows it.
func (c *cli) operationCmd(k opKind) *cobra.Command {
	var wait, dependents bool
	var timeout time.Duration
	use, nargs := k.name+" INSTALL [--wait]", 1
	if k.component {
		use, nargs = k.name+" INSTALL COMPONENT [--with-dependents] [--wait]", 2
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: k.short,
		Long: "Start the operation and print its ID; with --wait, follow it: on a terminal, a tree of its steps\n" +
			"updated in place (status, time, the running job's last log line, a plan waiting for approval), else\n" +
			"a line per change of a step's status; then a summary (exit code 6 unless it succeeded). Ctrl-C\n" +
			"detaches (exit 130; `outpostctl wait` follows it again), or with --cancel-on-interrupt cancels it.\n" +
			"With -o json, the operation as the API shows it (with --wait, once it has finished; the progress\n" +
			"lines go to stderr).",
		Args: cobra.ExactArgs(nargs),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.api()
			if err != nil {
				return err
			}
			inst, err := a.install(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			comp := ""
			if k.component {
				if comp, err = a.component(cmd.Context(), inst, args[1]); err != nil {
					return err
				}
			}
			req := apiclient.OperationRequest{}
			if dependents {
				req.WithDependents = &dependents
			}
			op, body, err := a.startOperation(cmd.Context(), k, inst.Id, comp, req)
			if err != nil {
				return err
			}
			if !wait {
				if c.output == "json" {
					return c.printBody(body)
				}
				fmt.Fprintf(c.stdout, "%s %s started on install %s (workflow %s)\n", k.name, op.Id, inst.Name, op.WorkflowId)
				return nil
			}
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			return c.follow(ctx, a, inst, op)
		},
	}
	c.waitFlags(cmd, &wait, &timeout)
	if k.component {
		cmd.Flags().BoolVar(&dependents, "with-dependents", false, map[string]string{
			"deploy":   "then deploy the components that depend on it",
			"teardown": "first tear down the components that depend on it"}[k.name])
	}
	return cmd
}

func (a *api) startOperation(ctx context.Context, k opKind, installID, comp string, req apiclient.OperationRequest) (apiclient.Operation, []byte, error) {
	r, err := check(k.start(ctx, a, installID, comp, req))
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
