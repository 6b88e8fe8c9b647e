package support

import (
	"fmt"
	"io"
	"strings"
)

// maxLogsRequestBytes bounds what one logs request prints: its lines are
// stored as the job's log, which nothing else bounds.
const maxLogsRequestBytes = 16 << 20

// logsOut prints a logs request's lines, redacted, until its cap: then one
// line says the output was capped, and the rest is dropped.
type logsOut struct {
	w      io.Writer
	r      *redactor
	left   int
	capped bool
}

func (o *logsOut) printf(format string, args ...any) {
	if o.capped {
		return
	}
	s := o.r.redact(fmt.Sprintf(format, args...))
	if len(s) > o.left {
		s = s[:strings.LastIndexByte(s[:o.left], '\n')+1] // whole lines only, as redacted
		o.capped = true
		s += fmt.Sprintf("== output capped at %d MiB: ask for less (one workload, a shorter --since, --tail)\n", maxLogsRequestBytes>>20)
	}
	o.left -= len(s)
	io.WriteString(o.w, s)
}
