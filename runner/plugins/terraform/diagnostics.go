package terraform

import (
	"fmt"
	"regexp"
	"strings"
)

// Bounds of the error a failed job reports: it should say what went wrong
// in a line or two; the logs have everything.
const (
	maxDiagnostics  = 5
	maxDetailChars  = 400
	maxSummaryChars = 200
)

// location is the "on main.tf line 4, in resource …:" line of a diagnostic.
var location = regexp.MustCompile(`^\s+on (.+? line \d+)`)

// address is the "with terraform_data.x," line of a diagnostic.
var address = regexp.MustCompile(`^\s+with (.+),$`)

// diagnostics extracts terraform's error diagnostics from what it wrote to
// stderr (the -no-color format, or the boxed one), one concise line each:
// "Error: <summary>, with <address> (<file> line N): <detail>". Warnings are
// left out.
func diagnostics(stderr string) []string {
	type diag struct {
		summary, addr, loc string
		detail             []string
	}
	var out []diag
	var cur *diag
	for _, line := range strings.Split(stderr, "\n") {
		line = unbox(strings.TrimRight(line, " \r"))
		switch {
		case strings.HasPrefix(line, "Error: "):
			out = append(out, diag{summary: strings.TrimPrefix(line, "Error: ")})
			cur = &out[len(out)-1]
		case strings.HasPrefix(line, "Warning: "):
			cur = nil
		case cur == nil || line == "":
		case address.MatchString(line) && cur.addr == "" && len(cur.detail) == 0:
			cur.addr = address.FindStringSubmatch(line)[1]
		case location.MatchString(line) && cur.loc == "" && len(cur.detail) == 0:
			cur.loc = location.FindStringSubmatch(line)[1]
		case strings.HasPrefix(line, " "):
			// source snippets, expression values, and indented blocks such
			// as the lock info terraform prints (its own request's, not the
			// holder's: the holder's ID is in the message)
		default:
			cur.detail = append(cur.detail, line)
		}
	}
	lines := make([]string, 0, len(out))
	for i, d := range out {
		if i == maxDiagnostics {
			lines = append(lines, fmt.Sprintf("and %d more errors (see the logs)", len(out)-i))
			break
		}
		s := "Error: " + cut(d.summary, maxSummaryChars)
		if d.addr != "" {
			s += ", with " + d.addr
		}
		if d.loc != "" {
			s += " (" + d.loc + ")"
		}
		if len(d.detail) > 0 {
			s += ": " + cut(strings.Join(d.detail, " "), maxDetailChars)
		}
		lines = append(lines, s)
	}
	return lines
}

// unbox drops the frame terraform draws around a diagnostic when it writes
// to a terminal or in colour ("╷", "│ ", "╵").
func unbox(line string) string {
	switch {
	case line == "╷" || line == "╵":
		return ""
	case strings.HasPrefix(line, "│ "):
		return strings.TrimPrefix(line, "│ ")
	case line == "│":
		return ""
	}
	return line
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// failure is the error of a terraform command that failed: terraform's own
// diagnostics when it wrote any, else the last lines it wrote, else how it
// ended.
func failure(step string, err error) error {
	msg := err.Error()
	// terraform-exec reports "<exit status>\n<stderr>".
	status, stderr, _ := strings.Cut(msg, "\n")
	if d := diagnostics(stderr); len(d) > 0 {
		return fmt.Errorf("terraform %s failed: %s", step, strings.Join(d, "; "))
	}
	var last []string
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(unbox(l)); l != "" {
			last = append(last, l)
		}
	}
	if len(last) > 3 {
		last = last[len(last)-3:]
	}
	if len(last) > 0 {
		return fmt.Errorf("terraform %s failed (%s): %s", step, status, cut(strings.Join(last, " "), maxDetailChars))
	}
	return fmt.Errorf("terraform %s failed: %w", step, err)
}
