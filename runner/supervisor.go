package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// defaultPath is the jobs' PATH when the runner has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// jobGateway is what a supervisor needs from the gateway.
type jobGateway interface {
	LogSender
	JobHeartbeat(ctx context.Context, jobID string, req protocol.JobHeartbeatRequest) (protocol.JobHeartbeatResponse, error)
	Complete(ctx context.Context, jobID string, req protocol.CompleteRequest) error
	UploadBundle(ctx context.Context, jobID string, attempt int, path string) error
}

// supervisor runs one claimed job attempt, from its claim to its completion.
type supervisor struct {
	job       protocol.Job
	claimedAt time.Time // when the lease given with the claim began, by the local clock
	gw        jobGateway
	exe       string // the runner binary, re-executed as "job --dir DIR"
	dir       string // the job's directory
	intervals protocol.Intervals
	grace     time.Duration
	retry     retryPolicy
	stop      <-chan struct{} // closed when the runner stops all its jobs
	// draining is closed when the runner stops claiming: a job still
	// waiting for its inputs is then let go (see stopReleased).
	draining <-chan struct{}
	slot     *slot // the job's place on the runner (nil: not counted)
	log      *slog.Logger
	extraEnv []string // added to the job's environment (Config.jobEnv)
	// prio lowers the job's priority while it waits for deferred inputs.
	prio priorities
	// beforeComplete sees the job's completion before it is sent, and
	// completed once the gateway accepted it (self-update).
	beforeComplete func(protocol.CompleteRequest)
	completed      func(protocol.Job, protocol.CompleteRequest)
	// recentLog returns the runner's recent log, which a support job gets.
	recentLog func() []byte
	// users, when set, hands out the uid the job runs as (jobuser.go);
	// cred is the job's, once taken.
	users *jobUsers
	cred  *syscall.Credential
	// refuse says why the customer's policy refuses the job (nil: it runs);
	// record keeps how the job ended in the customer's history (customer.go).
	refuse func(protocol.Job) error
	record func(protocol.Job, protocol.CompleteRequest, string)
	// metrics count the job's end (nil in some tests).
	metrics *runnerMetrics
}

// stopReason says why the supervisor stopped a job before it ended by itself.
type stopReason int

const (
	notStopped    stopReason = iota
	stopCancel               // the gateway asked
	stopTimeout              // the job ran longer than its timeout
	stopShutdown             // the runner is shutting down
	stopLeaseLost            // the lease could not be renewed in time
	stopGone                 // the attempt is no longer this runner's
	stopNoInputs             // its deferred inputs did not come in time
	stopReleased             // the runner shut down while the job waited for its inputs
	stopLogLost              // its log could not be written (the work disk is full)
)

// run supervises the job to the end; it returns once the completion was
// delivered, refused or given up, and the job's directory removed.
func (s *supervisor) run(ctx context.Context) {
	defer func() {
		if err := os.RemoveAll(s.dir); err != nil {
			s.log.Warn("removing the job directory", "err", err)
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.refuse != nil {
		if err := s.refuse(s.job); err != nil {
			s.log.Warn("job refused by the customer's policy", "reason", err)
			req := protocol.CompleteRequest{Attempt: s.job.Attempt, Status: protocol.StatusFailed, Error: err.Error()}
			s.complete(ctx, nil, req)
			if s.record != nil {
				s.record(s.job, req, err.Error())
			}
			return
		}
	}

	var err error
	if s.users != nil && !runsAsRunner(s.job.Type) {
		if s.cred, err = s.users.take(); err == nil {
			defer s.users.give(s.cred)
		}
	}
	spool, err := s.prepare(err)
	if err != nil {
		s.log.Error("preparing the job", "err", err)
		s.complete(ctx, nil, protocol.CompleteRequest{
			Attempt: s.job.Attempt, Status: protocol.StatusFailed, Error: "runner: " + err.Error(),
		})
		return
	}
	lease := s.keepLease(ctx)
	watching, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	go func() {
		// Once the attempt is gone, nothing about it is worth sending.
		select {
		case <-lease.lost:
			cancel()
		case <-watching.Done():
		}
	}()
	ship := &shipper{spool: spool, sender: s.gw, jobID: s.job.ID, attempt: s.job.Attempt, retry: s.retry, log: s.log,
		every: s.intervals.LogBatch()}
	shipped := make(chan error, 1)
	go func() { shipped <- ship.run(ctx) }()

	req, reason := s.execute(spool, lease)
	if err := spool.Close(); err != nil {
		s.log.Warn("closing the log spool", "err", err)
	}
	if err := spool.Err(); err != nil {
		s.log.Error("some of the job's log was lost", "err", err)
	}
	if reason == stopGone {
		s.log.Warn("the attempt is no longer current: job killed, its result dropped")
		s.recordEnd(req, "the attempt is no longer current: job killed")
		return
	}
	if reason == stopReleased {
		// Not completed: its lease expires, the attempt is marked lost and
		// the workflow queues it again, with its inputs, for a runner that
		// runs (rather than a cancel that would fail its step).
		if err := <-shipped; err != nil && !s.canGoOn(lease, err) {
			return
		}
		s.log.Info("let go of the job, which waited for its inputs: it is retried once its lease expires")
		return
	}
	if err := <-shipped; err != nil {
		if !s.canGoOn(lease, err) {
			return
		}
		s.log.Error("the job's log could not all be delivered", "err", err)
	}
	if req.Status == protocol.StatusSucceeded && s.job.Type == protocol.JobTypeSupport {
		req = s.uploadBundle(ctx, req)
	}
	req.LastSeq = spool.LastSeq()
	// The completion ends the attempt, which a held heartbeat may say first: the completion
	// must not be cut off by that (one for an attempt truly gone is refused as stale).
	stopWatching()
	if s.beforeComplete != nil {
		s.beforeComplete(req)
	}
	if s.complete(ctx, lease, req) && s.completed != nil {
		s.completed(s.job, req)
	}
	s.recordEnd(req, "")
}

// recordEnd keeps the job's end in the customer's history, when kept.
func (s *supervisor) recordEnd(req protocol.CompleteRequest, note string) {
	if s.record != nil {
		if note != "" && req.Error == "" {
			req.Error = note
		}
		s.record(s.job, req, "")
	}
}

// canGoOn reports whether the job's completion is still worth sending after
// err ended its log shipping.
func (s *supervisor) canGoOn(lease *lease, err error) bool {
	switch {
	case attemptGone(err) || lease.isLost():
		s.log.Warn("the attempt is no longer current: its result was dropped")
		return false
	case errors.Is(err, context.Canceled):
		s.log.Error("the runner stopped before the job's log and result were delivered")
		return false
	}
	return true
}

// complete delivers the completion, retrying until the gateway accepts or
// refuses it, and says whether it was accepted. lease is nil when the job
// never started.
func (s *supervisor) complete(ctx context.Context, lease *lease, req protocol.CompleteRequest) (accepted bool) {
	if s.metrics != nil {
		defer func() { s.metrics.jobEnded(s.job.Type, req.Status, accepted, time.Since(s.claimedAt)) }()
	}
	req.Error = withoutNUL(req.Error)
	_, err := retry(ctx, s.retry, s.log, "completing the job", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.gw.Complete(ctx, s.job.ID, req)
	})
	switch {
	case err == nil:
		s.log.Info("job completed", "status", req.Status, "exit_code", deref(req.ExitCode), "error", req.Error)
		return true
	case attemptGone(err) || lease != nil && lease.isLost():
		s.log.Warn("the attempt is no longer current: its result was dropped", "err", err)
	default:
		s.log.Error("the job's completion could not be delivered", "err", err)
	}
	return false
}

// prepare creates the job's directory with job.json and its log spool,
// the directory and job.json the job's uid's; it fails with failed, the
// error of taking that uid.
func (s *supervisor) prepare(failed error) (*spool, error) {
	if failed != nil {
		return nil, failed
	}
	// A directory of the same name can only be left over from a runner that
	// died; the attempt it held is this one, claimed again.
	if err := os.RemoveAll(s.dir); err != nil {
		return nil, fmt.Errorf("clearing the job directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(s.dir, tmpDir), 0o700); err != nil {
		return nil, fmt.Errorf("creating the job directory: %w", err)
	}
	if err := writeJSONFile(filepath.Join(s.dir, jobFile), s.job); err != nil {
		return nil, fmt.Errorf("writing %s: %w", jobFile, err)
	}
	if s.job.Type == protocol.JobTypeSupport && s.recentLog != nil {
		if err := os.WriteFile(filepath.Join(s.dir, protocol.SupportRunnerLogFile), s.recentLog(), 0o600); err != nil {
			return nil, fmt.Errorf("writing the runner's log for the job: %w", err)
		}
	}
	if s.cred != nil {
		if err := chownJob(s.dir, s.cred, filepath.Join(s.dir, jobFile), filepath.Join(s.dir, protocol.SupportRunnerLogFile)); err != nil {
			return nil, fmt.Errorf("giving the job directory to uid %d: %w", s.cred.Uid, err)
		}
	}
	return createSpool(filepath.Join(s.dir, spoolFile))
}

// execute runs the job process until it ends, stopping it when it must, and
// returns the completion to report (without LastSeq) and why it was stopped.
func (s *supervisor) execute(spool *spool, lease *lease) (protocol.CompleteRequest, stopReason) {
	s.system(spool, "runner: starting job %s (type %s, attempt %d)", s.job.ID, s.job.Type, s.job.Attempt)
	// A job queued with deferred inputs prepares ahead of need: at a lower
	// CPU priority, so that it does not slow the jobs the operation waits
	// for (see prestartNice), until its inputs come.
	start := func(f func() error) error { return f() }
	if s.job.InputsDeferred {
		start = s.prio.startLowered
	}
	proc, err := startJobProcess(s.exe, s.dir, s.env(), s.cred, spool, s.job.InputsDeferred, start)
	if err != nil {
		s.system(spool, "runner: %v", err)
		return protocol.CompleteRequest{Attempt: s.job.Attempt, Status: protocol.StatusFailed, Error: "runner: " + err.Error()}, notStopped
	}

	var (
		reason    = notStopped
		graceKill bool
		grace     <-chan time.Time
		timeout   <-chan time.Time
		cancel    = lease.cancel
		lost      = lease.lost
		inputs    <-chan json.RawMessage
		stop      = s.stop
		logFailed = spool.Failed()
		window    = fenceAfter(s.intervals)
		fence     = time.NewTimer(time.Until(lease.lastRenewal().Add(window)))
	)
	defer fence.Stop()
	// The timeout counts from when the job can work: for a job whose inputs
	// are deferred, from when they arrive (its dependencies may take long).
	var timeoutTimer *time.Timer
	defer func() {
		if timeoutTimer != nil {
			timeoutTimer.Stop()
		}
	}()
	startTimeout := func() {
		if s.timeout() > 0 {
			timeoutTimer = time.NewTimer(s.timeout())
			timeout = timeoutTimer.C
		}
	}
	var (
		draining <-chan struct{}  // while the job waits for its inputs
		noInputs <-chan time.Time // while it waits, when bounded
	)
	giveInputs := func(in json.RawMessage) {
		draining, noInputs = nil, nil
		s.system(spool, "runner: the job's inputs arrived")
		if err := s.prio.restoreGroup(proc.cmd.Process.Pid); err != nil {
			s.system(spool, "runner: could not give the job back the runner's CPU priority: %v", err)
		}
		// Once more a little later: a process or thread being created at
		// the first call may have copied the lowered priority without being
		// in the group yet.
		time.AfterFunc(restoreAgain, func() { _ = s.prio.restoreGroup(proc.cmd.Process.Pid) })
		// In the background: the job may not read them before it has
		// prepared, and a large input fills the pipe.
		go func() {
			if err := proc.giveInputs(in); err != nil {
				s.system(spool, "runner: could not hand the job its inputs: %v", err)
			}
		}()
		startTimeout()
	}
	if s.job.InputsDeferred {
		inputs, draining = lease.inputs, s.draining
		s.system(spool, "runner: the job's inputs are deferred: it prepares, then waits for them")
		if s.job.InputsWaitMS > 0 {
			t := time.NewTimer(s.inputsWait())
			defer t.Stop()
			noInputs = t.C
		}
	} else {
		startTimeout()
	}
	terminate := func(r stopReason, why string) {
		if reason != notStopped {
			return
		}
		reason = r
		s.system(spool, "runner: %s, sending SIGTERM", why)
		proc.signal(syscall.SIGTERM)
		grace = time.After(s.grace)
	}
	kill := func(r stopReason) {
		if reason == notStopped || r == stopGone {
			reason = r
		}
		proc.signal(syscall.SIGKILL)
	}

	for waiting := true; waiting; {
		select {
		case <-proc.exited:
			waiting = false
		case <-lease.renewed:
			fence.Reset(time.Until(lease.lastRenewal().Add(window)))
		case in := <-inputs:
			inputs = nil
			giveInputs(in)
		case <-noInputs:
			noInputs = nil
			terminate(stopNoInputs, "no inputs within "+s.inputsWait().String())
		case <-draining:
			draining = nil
			if reason == notStopped {
				s.system(spool, "runner: shutting down while the job waits for its inputs: letting it go, to be retried")
				kill(stopReleased)
			}
		case <-logFailed:
			logFailed = nil
			terminate(stopLogLost, "the job's log could not be written")
		case <-cancel:
			cancel = nil
			terminate(stopCancel, "cancel requested")
		case <-timeout:
			terminate(stopTimeout, "timed out after "+s.timeout().String())
		case <-stop:
			stop = nil
			terminate(stopShutdown, "the runner is shutting down")
		case <-grace:
			grace = nil
			graceKill = true
			s.system(spool, "runner: still running %s after SIGTERM, sending SIGKILL", s.grace)
			proc.signal(syscall.SIGKILL)
		case <-lost:
			lost = nil
			s.log.Warn("the gateway says the attempt is no longer current, killing the job")
			kill(stopGone)
		case <-fence.C:
			s.system(spool, "runner: could not renew the job's lease for %s, killing the job (SIGKILL): another attempt may start", window)
			s.log.Error("job lease not renewed in time, job killed", "after", window)
			kill(stopLeaseLost)
		}
	}
	proc.finish()

	req := s.outcome(proc.cmd.ProcessState, reason, graceKill, window)
	if err := spool.Err(); err != nil {
		// Lines are lost: the job cannot pass for done, whatever it did.
		req.Status, req.Error = protocol.StatusFailed, "runner: the job's log could not be kept on the runner's work disk, lines were lost: "+err.Error()
	}
	line := "runner: job " + req.Status
	if req.ExitCode != nil {
		line += fmt.Sprintf(" (exit code %d)", *req.ExitCode)
	}
	if req.Error != "" {
		line += ": " + req.Error
	}
	s.system(spool, "%s", line)
	return req, reason
}

// outcome is the completion of a job whose process ended as state says.
func (s *supervisor) outcome(state *os.ProcessState, reason stopReason, graceKill bool, window time.Duration) protocol.CompleteRequest {
	req := protocol.CompleteRequest{Attempt: s.job.Attempt}
	if res, err := ReadResult(s.dir); err == nil {
		req.Status, req.ExitCode, req.Outputs, req.Error = res.Status, res.ExitCode, res.Outputs, res.Error
	} else {
		code := plugins.ExitCode(state)
		req.Status, req.ExitCode = protocol.StatusFailed, &code
		req.Error = fmt.Sprintf("the job process ended (%s) without a result", state)
		if !errors.Is(err, fs.ErrNotExist) {
			req.Error += ": " + err.Error()
		}
		if full := fullDisk(s.dir); full != "" {
			req.Error += ": " + full
		}
	}
	if req.Status != protocol.StatusSucceeded {
		req.Status = protocol.StatusFailed
	}

	switch reason {
	case stopCancel:
		req.Status, req.Error = protocol.StatusCancelled, "cancelled"
	case stopShutdown:
		req.Status, req.Error = protocol.StatusCancelled, "cancelled: the runner shut down"
	case stopTimeout:
		req.Status, req.Error = protocol.StatusFailed, "timed out after "+s.timeout().String()
	case stopLeaseLost:
		req.Status, req.Error = protocol.StatusFailed, fmt.Sprintf("killed: the runner could not renew the lease for %s", window)
	case stopNoInputs:
		req.Status, req.Error = protocol.StatusFailed, "its inputs did not come within "+s.inputsWait().String()+" (did its operation end?)"
	}
	if graceKill {
		req.Error += fmt.Sprintf(" (killed: still running %s after SIGTERM)", s.grace)
	}

	if len(req.Outputs) > protocol.MaxOutputsBytes {
		req.Status = protocol.StatusFailed
		req.Error = fmt.Sprintf("outputs are %d bytes, more than the limit of %d", len(req.Outputs), protocol.MaxOutputsBytes)
		req.Outputs = nil
	}
	return req
}

// timeout is the job's, or an action step's own when that is shorter or the
// job has none: the step then stops as any job does at its timeout.
func (s *supervisor) timeout() time.Duration {
	ms := s.job.TimeoutMS
	if s.job.Type == protocol.JobTypeAction {
		var m protocol.ActionManifest
		if json.Unmarshal(s.job.Manifest, &m) == nil && m.TimeoutMS > 0 && (ms <= 0 || m.TimeoutMS < ms) {
			ms = m.TimeoutMS
		}
	}
	return time.Duration(ms) * time.Millisecond
}

func (s *supervisor) inputsWait() time.Duration {
	return time.Duration(s.job.InputsWaitMS) * time.Millisecond
}

// env is the job process's whole environment: nothing of the runner's but
// PATH, and the tools the runner was configured with (OUTPOST_TERRAFORM,
// TF_CLI_CONFIG_FILE), so no secret of the runner (its token) reaches a job.
func (s *supervisor) env() []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = defaultPath
	}
	return append([]string{
		"PATH=" + path,
		"HOME=" + s.dir,
		"TMPDIR=" + filepath.Join(s.dir, tmpDir),
		"LANG=C.UTF-8",
		"OUTPOST_JOB_ID=" + s.job.ID,
	}, s.extraEnv...)
}

// system writes a line of the runner's own into the job's log.
func (s *supervisor) system(spool *spool, format string, args ...any) {
	_, _ = spool.Append(protocol.StreamSystem, fmt.Sprintf(format, args...)+"\n")
}

var unsafeInPath = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// jobDirName is the name of a job attempt's directory: <id>-<attempt>, with
// any character of the ID that has no place in a file name replaced.
func jobDirName(job protocol.Job) string {
	return unsafeInPath.ReplaceAllString(job.ID, "_") + "-" + strconv.Itoa(job.Attempt)
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
