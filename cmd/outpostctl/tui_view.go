package main

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/tree"
	"github.com/charmbracelet/x/ansi"
)

// planLines is how many lines of a waiting step's plan the tree shows.
const planLines = 12

var (
	styleOK      = lipgloss.NewStyle().Foreground(lipgloss.Green)
	styleBad     = lipgloss.NewStyle().Foreground(lipgloss.Red)
	styleAsk     = lipgloss.NewStyle().Foreground(lipgloss.Yellow).Bold(true)
	styleQuiet   = lipgloss.NewStyle().Faint(true)
	styleRunning = lipgloss.NewStyle().Foreground(lipgloss.Cyan)
)

// stepIcons mark a step's status; a running one has the spinner, and no
// step of a finished operation does.
var stepIcons = map[string]string{"pending": "·", "succeeded": "✓", "no_changes": "✓", "planned": "✓", "unchanged": "✓",
	"failed": "✗", "denied": "✗", "cancelled": "⊘", "skipped": "-", "waiting_approval": "?", "drifted": "~",
	"left_behind": "!"}

// view is the operation as a tree: a line per step (status, elapsed time)
// with what runs below it (the job's last log line, a plan to approve, an
// error).
func (m tuiModel) view(now time.Time) string {
	op := m.snap.op
	head := fmt.Sprintf("%s %s on %s: %s", op.Kind, op.Id, m.inst.Name, op.Status)
	if op.CreatedAt != nil {
		head += "  " + elapsed(op.CreatedAt, op.FinishedAt, now)
	}
	if m.cancelling && op.FinishedAt == nil {
		head += styleAsk.Render("  cancelling…")
	}
	t := tree.Root(lipgloss.NewStyle().Bold(true).Render(head))
	width := 0
	for _, st := range m.snap.steps {
		width = max(width, len(st.Name))
	}
	nodes, placed := map[string]*tree.Tree{}, map[string]bool{}
	for _, st := range m.snap.steps {
		node := tree.Root(m.stepLine(st, width, now))
		for _, d := range m.details(st) {
			node.Child(d)
		}
		if p := parentOf(st.Name, m.snap.deps, placed); p != "" {
			nodes[p].Child(node)
		} else {
			t.Child(node)
		}
		nodes[st.Name], placed[st.Name] = node, true
	}
	out := t.String() + "\n"
	if op.FinishedAt == nil {
		hint := "Ctrl-C detaches (the operation goes on)"
		switch {
		case m.cancelling:
			hint = "Ctrl-C again detaches (the cancel goes on)"
		case m.cancelOnCC:
			hint = "Ctrl-C cancels the operation"
		}
		out += styleQuiet.Render(hint) + "\n"
	}
	return out
}

func (m tuiModel) stepLine(st stepView, width int, now time.Time) string {
	icon, ok := stepIcons[st.Status]
	switch {
	case !ok && m.snap.op.FinishedAt != nil:
		icon = "·"
	case !ok:
		icon = m.spin.View()
	}
	line := fmt.Sprintf("%s %-*s  %-16s %s", icon, width, st.Name, st.Status, elapsed(st.Started, st.Finished, now))
	switch st.Status {
	case "succeeded", "no_changes", "planned", "unchanged":
		return styleOK.Render(line)
	case "failed", "denied", "cancelled":
		return styleBad.Render(line)
	case "waiting_approval", "drifted", "left_behind":
		return styleAsk.Render(line)
	case "pending", "skipped":
		return styleQuiet.Render(line)
	}
	return styleRunning.Render(line)
}

// details are the lines below a step: its error, the plan waiting for
// approval with the commands that decide it, or its job's last log line;
// then what its plan policies said.
func (m tuiModel) details(st stepView) []string {
	var out []string
	switch {
	case st.Status == "waiting_approval":
		out = append(out, styleAsk.Render(fmt.Sprintf("plan: %d to add, %d to change, %d to destroy", st.Add, st.Change, st.Destroy)))
		lines := planSummary(st.Plan)
		if len(lines) > planLines {
			lines = append(lines[:planLines], fmt.Sprintf("… %d more lines", len(lines)-planLines))
		}
		for _, l := range lines {
			out = append(out, m.fit(l))
		}
		for _, l := range st.Policies {
			out = append(out, styleAsk.Render(m.fit("policy: "+l)))
		}
		out = append(out, styleAsk.Render(m.fit(approveHint(m.inst.Name, st.Name))))
	case st.Status == "left_behind":
		out = append(out, styleBad.Render(m.fit(strings.SplitN(st.Error, "\n", 2)[0])), styleAsk.Render(m.fit(leftBehind(st.LeftBehind))))
	case st.Error != "":
		out = append(out, styleBad.Render(m.fit(strings.SplitN(st.Error, "\n", 2)[0])))
	case m.snap.logs[st.Name] != "":
		out = append(out, styleQuiet.Render(m.fit("› "+m.snap.logs[st.Name])))
	}
	if st.Status != "waiting_approval" {
		for _, l := range st.Policies {
			out = append(out, styleAsk.Render(m.fit("policy: "+l)))
		}
	}
	return out
}

// planSummary is the lines of a plan worth a glance: terraform's "# x
// will be created" line of each resource, else the plan's lines.
func planSummary(plan string) []string {
	lines := strings.Split(strings.TrimRight(plan, "\n"), "\n")
	var actions []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "# ") {
			actions = append(actions, t)
		}
	}
	if len(actions) > 0 {
		return actions
	}
	return lines
}

// fit cuts a line to the terminal's width (less the tree's indent).
func (m tuiModel) fit(s string) string {
	if m.width <= 10 {
		return s
	}
	return ansi.Truncate(s, m.width-8, "…")
}

// elapsed is how long from start to end (or now), "" before the start.
func elapsed(start, end *time.Time, now time.Time) string {
	if start == nil {
		return ""
	}
	if end != nil {
		now = *end
	}
	return now.Sub(*start).Round(time.Second).String()
}
