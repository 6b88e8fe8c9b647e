package terraform

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	// noChanges starts terraform's text for a plan without changes ("No
	// changes. Your infrastructure matches the configuration.").
	noChanges = regexp.MustCompile(`(?m)^No changes\.`)
	// planStart: the lines a plan's text starts with; what terraform prints before (locking,
	// refreshing, warnings, …) is too varied to skip line by line.
	planStart = regexp.MustCompile(`^(Terraform used the selected providers|Terraform will perform the following actions|No changes\.|Changes to Outputs:|Note: Objects have changed outside of Terraform)`)
	// afterPlan: what "apply -auto-approve" prints once the plan is shown
	// (an action on a resource or its provisioner's output, the summary).
	afterPlan = regexp.MustCompile(`^(\S.*: (Creating|Modifying|Destroying|Replacing|Importing|Opening|Closing|Renewing|Still |Creation complete|Modifications complete|Destruction complete|Import complete|Provisioning with)|\S+ \([a-z-]+-exec\): |Apply complete!|Destroy complete!)`)
)

// appliedPlanText is the plan "apply -auto-approve" printed: from the plan's
// first line to the first line of applying it (everything before its first
// action when terraform printed no plan header it knows).
func appliedPlanText(printed string) string {
	lines := strings.SplitAfter(printed, "\n")
	first := slices.IndexFunc(lines, func(l string) bool { return planStart.MatchString(l) })
	if first < 0 {
		first = 0
	}
	last := first
	for last < len(lines) && !afterPlan.MatchString(lines[last]) {
		last++
	}
	return strings.TrimRight(strings.Join(lines[first:last], ""), "\n") + "\n"
}

// Terraform's summary line, "Plan: 1 to add, 0 to change, 0 to destroy."
// (with "N to import, " first when importing).
var (
	planLine    = regexp.MustCompile(`(?m)^Plan: .*$`)
	planAdd     = regexp.MustCompile(`(\d+) to add`)
	planChange  = regexp.MustCompile(`(\d+) to change`)
	planDestroy = regexp.MustCompile(`(\d+) to destroy`)
)

// countsFromText reads the counts of terraform's "Plan: …" line; a plan
// without one (no changes, or changes to outputs only) counts none.
func countsFromText(text string) (add, change, destroy int) {
	line := planLine.FindString(text)
	count := func(re *regexp.Regexp) int {
		n := 0
		if m := re.FindStringSubmatch(line); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return n
	}
	return count(planAdd), count(planChange), count(planDestroy)
}

// planText is the plan as terraform printed it, without the refresh lines
// before it and the advice on applying the saved plan after it.
func planText(printed string) string {
	lines := strings.SplitAfter(printed, "\n")
	first := 0
	for first < len(lines) && (strings.Contains(lines[first], ": Refreshing state...") || strings.TrimSpace(lines[first]) == "") {
		first++
	}
	out := strings.Join(lines[first:], "")
	if i := strings.Index(out, "\nSaved the plan to: "); i >= 0 {
		out = out[:i]
	}
	return strings.TrimRight(strings.TrimRight(strings.TrimRight(out, "\n"), "─"), "\n") + "\n"
}

// countChanges counts the managed resources the plan adds, changes and
// destroys, as terraform's "Plan: …" line does (a replacement is one add and
// one destroy).
func countChanges(planJSON []byte) (add, change, destroy int, err error) {
	var p struct {
		ResourceChanges []struct {
			Mode   string `json:"mode"`
			Change struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(planJSON, &p); err != nil {
		return 0, 0, 0, fmt.Errorf("reading the plan's JSON: %w", err)
	}
	for _, rc := range p.ResourceChanges {
		if rc.Mode != "managed" {
			continue
		}
		a := rc.Change.Actions
		if slices.Contains(a, "create") {
			add++
		}
		if slices.Contains(a, "delete") {
			destroy++
		}
		if slices.Contains(a, "update") {
			change++
		}
	}
	return add, change, destroy, nil
}
