package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

// installView is what `installs show` gathers; -o json prints it as the
// API's objects, side by side.
type installView struct {
	Install    json.RawMessage `json:"install"`
	Runner     json.RawMessage `json:"runner"`
	Components json.RawMessage `json:"components"`
	Outputs    json.RawMessage `json:"outputs"`
	// ForgottenBy: the deprovision with forget that let the install go (what
	// its steps left behind), when one did.
	ForgottenBy json.RawMessage `json:"forgotten_by,omitempty"`
}

func (c *cli) installsShowCmd() *cobra.Command {
	return c.withInstall(&cobra.Command{
		Use:   "show INSTALL",
		Short: "Show an install: inputs, runner status, components and outputs",
		Args:  cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		in, err := check(a.GetInstallWithResponse(ctx, inst.Id))
		if err != nil {
			return err
		}
		comps, err := check(a.ListInstallComponentsWithResponse(ctx, inst.Id))
		if err != nil {
			return err
		}
		outs, err := check(a.GetOutputsWithResponse(ctx, inst.Id))
		if err != nil {
			return err
		}
		v := installView{Install: in.Body, Runner: json.RawMessage("null"), Components: comps.Body, Outputs: outs.Body}
		var runner *apiclient.Runner
		if in.JSON200.Runner != nil {
			r, err := check(a.GetRunnerWithResponse(ctx, in.JSON200.Runner.Id))
			if err != nil {
				return err
			}
			v.Runner, runner = r.Body, r.JSON200
		}
		forgot, body, err := a.forgottenBy(ctx, *in.JSON200)
		if err != nil {
			return err
		}
		v.ForgottenBy = body
		if c.output == "json" {
			return c.printJSON(v)
		}
		c.showInstall(*in.JSON200, runner, comps.JSON200.Components, outs.Body)
		if forgot != nil {
			c.showLeftBehind(*forgot)
		}
		return nil
	})
}

func (c *cli) showInstall(in apiclient.Install, runner *apiclient.Runner, comps []apiclient.InstallComponent, outputs []byte) {
	w := c.stdout
	fmt.Fprintf(w, "install %s (%s), app %s: %s\n", in.Name, in.Id, in.AppId, in.Status)
	if runner != nil {
		fmt.Fprintf(w, "runner %s: %s, %s, version %q\n", runner.Id, runner.Status, lastSeen(*runner), runner.Version)
	}
	fmt.Fprintln(w, "inputs:")
	for _, i := range in.Inputs {
		value := "(sensitive)"
		if i.Value != nil {
			value = *i.Value
		}
		fmt.Fprintf(w, "  %s = %s\n", i.Name, value)
	}
	fmt.Fprintln(w, "components:")
	for _, comp := range comps {
		fmt.Fprintf(w, "  %s  build %s  %s\n", comp.Component, comp.BuildId, comp.Reference)
	}
	fmt.Fprintln(w, "outputs:")
	for _, line := range outputLines(outputs) {
		fmt.Fprintln(w, "  "+line)
	}
}

// forgottenBy is the deprovision with forget that let a deprovisioned
// install go, with its steps (nil when the install's last operation is not
// one).
func (a *api) forgottenBy(ctx context.Context, inst apiclient.Install) (*apiclient.Operation, []byte, error) {
	if inst.Status != "deprovisioned" {
		return nil, nil, nil
	}
	one := 1
	r, err := check(a.ListOperationsWithResponse(ctx, inst.Id, &apiclient.ListOperationsParams{Limit: &one}))
	if err != nil {
		return nil, nil, err
	}
	ops := r.JSON200.Operations
	if len(ops) == 0 || ops[0].Kind != "deprovision" || ops[0].Forget == nil || !*ops[0].Forget {
		return nil, nil, nil
	}
	g, err := check(a.GetOperationWithResponse(ctx, inst.Id, ops[0].Id, nil))
	if err != nil {
		return nil, nil, err
	}
	return g.JSON200, g.Body, nil
}

// showLeftBehind names what a deprovision with forget left of each step it
// could not destroy.
func (c *cli) showLeftBehind(op apiclient.Operation) {
	fmt.Fprintf(c.stdout, "forgotten by deprovision %s; left behind in its account:\n", op.Id)
	for _, s := range stepRows(op) {
		if s.status == "left_behind" {
			fmt.Fprintf(c.stdout, "  %s (%s): %s\n", s.name, s.err, leftList(s.leftBehind))
		}
	}
}

// outputLines are step.name = value, sensitive values hidden, in order.
func outputLines(body []byte) []string {
	var o struct {
		Outputs map[string]map[string]struct {
			Value     any  `json:"value"`
			Sensitive bool `json:"sensitive"`
		} `json:"outputs"`
	}
	_ = json.Unmarshal(body, &o)
	var lines []string
	for step, outs := range o.Outputs {
		for name, v := range outs {
			value := "(sensitive)"
			if !v.Sensitive {
				b, _ := json.Marshal(v.Value)
				value = string(b)
			}
			lines = append(lines, step+"."+name+" = "+value)
		}
	}
	sort.Strings(lines)
	return lines
}
