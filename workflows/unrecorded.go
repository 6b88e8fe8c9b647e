package workflows

import (
	"strings"

	"go.temporal.io/sdk/workflow"
)

// unrecorded collects the store writes of a workflow that failed after
// their activity's retries (a database away past the local activity's
// limit) and did not stop it: each is logged with the workflow logger when
// it fails, and said in the workflow's result (an operation's error, a
// release's message), so that a page showing a stale status is explained.
type unrecorded struct{ lost []string }

// add logs a write that failed (what was not recorded, and why) and keeps
// it for the result. A nil unrecorded only logs.
func (u *unrecorded) add(ctx workflow.Context, what string, err error) {
	workflow.GetLogger(ctx).Error("not recorded: "+what, "error", err)
	if u != nil {
		u.lost = append(u.lost, what+" ("+rootMessage(err)+")")
	}
}

// note is what the result says of the writes that failed ("" when none
// did).
func (u *unrecorded) note() string {
	if u == nil || len(u.lost) == 0 {
		return ""
	}
	return "not recorded: " + strings.Join(u.lost, "; ")
}

// withNote adds the note to msg, on a line of its own.
func (u *unrecorded) withNote(msg string) string {
	switch n := u.note(); {
	case n == "":
		return msg
	case msg == "":
		return n
	default:
		return msg + "\n" + n
	}
}
