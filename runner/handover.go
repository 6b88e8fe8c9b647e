package runner

import (
	"os"
	"strconv"
	"sync"

	"github.com/outpost-dev/outpost/protocol"
)

// The candidate's side of a hand-over (update.go): a runner started with
// envHandoverFD is a new binary on trial. It is healthy once the gateway
// accepted its heartbeat (authenticate) and a noop job it ran completed;
// it then writes healthyLine on that fd, stops claiming, lets its jobs
// finish and exits, and the old process execs it.

// envHandoverFD names the fd a candidate reports healthy on.
const envHandoverFD = "OUTPOST_HANDOVER_FD"

// healthyLine is what a healthy candidate writes.
const healthyLine = "healthy\n"

// trial is a candidate's health report (nil for a runner not on trial).
type trial struct {
	fd   *os.File
	once sync.Once
	done func() // stops the candidate once it said it is healthy
}

// trialFromEnv is the runner's trial when the old runner started it as a
// candidate; the variable is removed so that nothing inherits it.
func trialFromEnv() *trial {
	v := os.Getenv(envHandoverFD)
	if v == "" {
		return nil
	}
	os.Unsetenv(envHandoverFD)
	n, err := strconv.Atoi(v)
	if err != nil || n < 3 {
		return nil
	}
	return &trial{fd: os.NewFile(uintptr(n), "handover")}
}

// completed is called when the gateway accepted a job's completion.
func (t *trial) completed(job protocol.Job, req protocol.CompleteRequest) {
	if t == nil || job.Type != protocol.JobTypeNoop || req.Status != protocol.StatusSucceeded {
		return
	}
	t.once.Do(func() {
		_, _ = t.fd.WriteString(healthyLine)
		t.fd.Close()
		if t.done != nil {
			t.done()
		}
	})
}
