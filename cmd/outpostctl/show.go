package main

import (
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
}

func (c *cli) installsShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show INSTALL",
		Short: "Show an install: inputs, runner status, components and outputs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.api()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			inst, err := a.install(ctx, args[0])
			if err != nil {
				return err
			}
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
			if c.output == "json" {
				return c.printJSON(v)
			}
			c.showInstall(*in.JSON200, runner, comps.JSON200.Components, outs.Body)
			return nil
		},
	}
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
