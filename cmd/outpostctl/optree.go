package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/outpost-dev/outpost/apiclient"
	"github.com/outpost-dev/outpost/contract"
)

// stepRow is what `operations show` and `approve` print of a step.
type stepRow struct {
	name, status, started, took, jobs, err, plan string
	policies                                     []string // what its plan policies said (policyLines)
	policySummary                                string
	leftBehind                                   []string // what a deprovision with forget left of it
}

func stepRows(op apiclient.Operation) []stepRow {
	if op.Steps == nil {
		return nil
	}
	var out []stepRow
	for _, s := range *op.Steps {
		v := stepRow{name: s.Name, status: s.Status, started: clock(s.StartedAt), took: took(s.StartedAt, s.FinishedAt),
			jobs: jobRoles([]string{"sync", "plan", "apply"}, s.SyncJobId, s.PlanJobId, s.ApplyJobId)}
		if s.Error != nil {
			v.err = *s.Error
		}
		if s.Plan != nil {
			v.plan = *s.Plan
		}
		v.policies, v.policySummary = policyLines(s.Policies), policySummary(s.Policies)
		v.leftBehind = deref2(s.LeftBehind)
		out = append(out, v)
	}
	return out
}

// jobRoles is each job once, with what it did for the step: one job may
// sync, plan and apply ("job_1 (sync, plan, apply)").
func jobRoles(roles []string, ids ...*string) string {
	var order []string
	did := map[string][]string{}
	for i, id := range ids {
		if id == nil || *id == "" {
			continue
		}
		if did[*id] == nil {
			order = append(order, *id)
		}
		did[*id] = append(did[*id], roles[i])
	}
	var out []string
	for _, id := range order {
		out = append(out, id+" ("+strings.Join(did[id], ", ")+")")
	}
	return strings.Join(out, ", ")
}

// showOperation prints the operation and its steps as a tree: each step
// below the first step it depends on (deps from the app config).
func (c *cli) showOperation(op apiclient.Operation, inst string, deps map[string][]string, plans bool) {
	fmt.Fprintf(c.stdout, "%s %s: %s, started %s, took %s\n", opTitle(op), op.Id, op.Status, clock(op.CreatedAt), took(op.CreatedAt, op.FinishedAt))
	if op.Error != nil && *op.Error != "" {
		fmt.Fprintf(c.stdout, "error: %s\n", *op.Error)
	}
	steps := stepRows(op)
	deps = withHookDeps(deps, op)
	children := map[string][]stepRow{}
	for _, s := range steps {
		children[parentStep(s.name, deps, steps)] = append(children[parentStep(s.name, deps, steps)], s)
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "STEP\tSTATUS\tSTARTED\tTOOK\tJOBS")
	printTree(w, children, "", "")
	w.Flush()
	for _, s := range steps {
		switch {
		case s.status == "left_behind":
			fmt.Fprintf(c.stdout, "%s could not be destroyed (%s): %s\n", s.name, s.err, leftBehind(s.leftBehind))
		case s.err != "":
			fmt.Fprintf(c.stdout, "%s failed: %s\n", s.name, s.err)
		}
		for _, l := range s.policies {
			fmt.Fprintf(c.stdout, "%s: %s\n", s.name, l)
		}
		if s.status == "waiting_approval" {
			fmt.Fprintf(c.stdout, "%s waits for approval: `outpostctl approve %s %s --operation %s` (or deny)\n", s.name, inst, s.name, op.Id)
		}
		if plans && s.plan != "" {
			fmt.Fprintf(c.stdout, "\nplan of %s:\n%s\n", s.name, strings.TrimRight(s.plan, "\n"))
		}
	}
}

// withHookDeps adds to deps (the config's, by component) what the
// operation's hook steps run after, so that the tree shows a component's
// after-hook below it and its before-hook beside it; the operation's own
// before-hooks are at the top, its after-hooks below the first step.
func withHookDeps(deps map[string][]string, op apiclient.Operation) map[string][]string {
	hooks := map[string][]string{}
	if op.Steps == nil {
		return deps
	}
	for _, s := range *op.Steps {
		if _, _, ok := contract.ParseHookStep(s.Name); ok && s.After != nil {
			hooks[s.Name] = *s.After
		}
	}
	if len(hooks) == 0 {
		return deps
	}
	out := maps.Clone(deps)
	if out == nil {
		out = map[string][]string{}
	}
	maps.Copy(out, hooks)
	return out
}

// parentStep is the first of name's dependencies that is a step too, or "".
func parentStep(name string, deps map[string][]string, steps []stepRow) string {
	for _, d := range deps[name] {
		if slices.ContainsFunc(steps, func(s stepRow) bool { return s.name == d }) {
			return d
		}
	}
	return ""
}

func printTree(w io.Writer, children map[string][]stepRow, parent, indent string) {
	kids := children[parent]
	for i, s := range kids {
		branch, next := "├─ ", "│  "
		if i == len(kids)-1 {
			branch, next = "└─ ", "   "
		}
		fmt.Fprintf(w, "%s%s%s\t%s\t%s\t%s\t%s\n", indent, branch, s.name, s.status, s.started, s.took, s.jobs)
		printTree(w, children, s.name, indent+next)
	}
}
