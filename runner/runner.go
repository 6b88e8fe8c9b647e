package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// deliverGrace is how long cancelled jobs get, after their cancel grace, to
// deliver their logs and completion when the runner shuts down.
const deliverGrace = 10 * time.Second

// minClaimHold: a claim the gateway answers with "no job" sooner than this
// was not held; the runner then backs off instead of asking again at once.
const minClaimHold = time.Second

// Runner claims jobs from the gateway and runs each as a process of its own.
type Runner struct {
	cfg          Config
	log          *slog.Logger
	gw           *client
	capabilities []string
	retry        retryPolicy

	slots     *jobSlots
	prio      priorities
	mu        sync.Mutex
	intervals protocol.Intervals
	running   atomic.Int64
	ended     atomic.Int64 // jobs ended since the runner started (quietheartbeat.go)
	held      heldJobs     // the attempts running (unanswered.go)
	ready     atomic.Bool  // the gateway accepted the runner's token (ReadyPath)
	// checking: this version is on trial in a self-update; passed: a
	// noop job succeeded on it (healthcheck.go).
	checking, passed atomic.Bool
	// switching: the hand-over to a held update the customer accepted
	// began (heldupdate.go).
	switching atomic.Bool
	// jobEnv is what every job's environment gets from the configuration
	// (set by Run once the work directory is there).
	jobEnv  []string
	workDir string

	// Self-update (update.go, handover.go), under mu: the current round
	// of claims, the update it stopped for, a rollback not yet reported.
	round   *claimRound
	pending *protocol.RunnerUpdateManifest
	release protocol.RunnerRelease // what pending's staging job read, signature unchecked
	report  *protocol.RunnerUpdateReport
	trial   *trial // set when this runner is a candidate on trial
	// recent is the tail of the runner's own log, for support bundles.
	recent *recentLog
	// customer is what the customer decided (customer.go).
	customer *customerSide
	// beat is the heartbeat the gateway last accepted (quietheartbeat.go).
	beat lastBeat
	// metrics are served on the health address (metrics.go).
	metrics *runnerMetrics
	// health is component health (componenthealth.go).
	health *componentHealth
}

// New checks cfg and returns a runner; it does not contact the gateway yet.
func New(cfg Config) (*Runner, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("runner config: %w", err)
	}
	recent := &recentLog{max: maxRecentLog}
	r := &Runner{
		cfg:          cfg,
		log:          slog.New(teeHandler{cfg.Logger.Handler(), slog.NewTextHandler(recent, nil)}),
		recent:       recent,
		gw:           newClient(cfg.GatewayURL, cfg.transport()),
		capabilities: allowedCapabilities(capabilities(cfg), cfg.Policy),
		customer:     newCustomerSide(cfg),
		retry:        defaultRetry,
		prio:         newPriorities(),
		intervals:    defaultIntervals,
		slots:        newJobSlots(cfg.Concurrency),
		health:       newComponentHealth(),
	}
	r.metrics = newRunnerMetrics(r)
	r.gw.conn.counted = r.metrics.gatewayErrors
	return r, nil
}

// Run authenticates with the gateway, then claims and runs jobs until ctx
// ends. It then stops claiming and lets the running jobs finish and deliver
// their results, for up to Config.ShutdownTimeout; after that it cancels them
// (SIGTERM, then SIGKILL after the cancel grace). Run returns nil after such a
// shutdown, and an error wrapping ErrUnauthorized when the gateway refuses
// the runner's token (running jobs are then killed: nothing of them could be
// delivered).
func (r *Runner) Run(ctx context.Context) error {
	workDir, err := r.prepareWorkDir()
	if err != nil {
		return err
	}
	if r.cfg.WorkDir == "" {
		defer os.RemoveAll(workDir)
	}
	if r.jobEnv, err = r.cfg.jobEnv(workDir); err != nil {
		return err
	}
	r.workDir, r.trial = workDir, trialFromEnv()
	r.separateFromJobs()
	if r.cfg.HealthAddr != "" && r.trial == nil { // the old runner still serves the probes
		stopHealth, err := r.serveHealth(r.cfg.HealthAddr)
		if err != nil {
			return err
		}
		defer stopHealth()
	}
	if err := r.authenticate(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it got going
		}
		return err
	}
	r.ready.Store(true)
	if rep := r.acceptedReport(); rep != nil {
		r.mu.Lock()
		r.report = rep
		r.mu.Unlock()
	}
	r.log.Info("runner started", "name", r.cfg.Name, "version", Version, "gateway", r.cfg.GatewayURL,
		"capabilities", r.capabilities, "concurrency", r.cfg.Concurrency, "work_dir", workDir, "on_trial", r.trial != nil,
		"state_dir", r.cfg.StateDir, "debug_commands", r.cfg.Policy.DebugCommands, "paused", r.paused())
	if r.prio.lower == 0 {
		r.log.Info("jobs that prepare before their inputs come run at the runner's CPU priority: " +
			"running them lower needs CAP_SYS_NICE (or an RLIMIT_NICE) to raise them back")
	}

	// Claiming ends with ctx, or early when the token is refused. Jobs
	// deliver their results on a context of their own, so that a shutdown
	// does not cut them off.
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	if r.trial != nil {
		r.trial.done = func() { stopRun(nil) } // healthy: hand the process slot back
	}
	deliverCtx, stopDelivering := context.WithCancel(context.WithoutCancel(ctx))
	defer stopDelivering()
	heartbeatCtx, stopHeartbeats := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHeartbeats()
	stopJobs := make(chan struct{})

	go r.heartbeats(heartbeatCtx, stopRun)
	go r.watchCustomer(heartbeatCtx)
	go r.readComponentHealth(heartbeatCtx)
	var jobs sync.WaitGroup
	start := func(job protocol.Job, claimedAt time.Time, sl *slot, draining <-chan struct{}) {
		s := r.newSupervisor(job, claimedAt, workDir, stopJobs)
		s.slot, s.draining = sl, draining
		r.running.Add(1)
		r.held.add(job.ID, job.Attempt)
		jobs.Go(func() {
			defer sl.release()
			defer r.ended.Add(1) // after running drops (defers run last first)
			defer r.running.Add(-1)
			defer r.held.remove(job.ID, job.Attempt)
			s.run(deliverCtx)
		})
	}
	for {
		m := r.claimRound(runCtx, stopRun, start)
		if m == nil {
			break
		}
		if drain := drainTimeout(*m); !r.drained(runCtx, drain) { // running jobs finish under this runner…
			if runCtx.Err() != nil {
				break // …unless it is shutting down: the shutdown below bounds the wait
			}
			r.drainTimedOut(runCtx, *m, drain)
			continue
		}
		r.handOver(runCtx, *m)
	}
	allDone := make(chan struct{})
	go func() {
		jobs.Wait()
		close(allDone)
	}()

	if cause := context.Cause(runCtx); errors.Is(cause, ErrUnauthorized) {
		r.log.Error("stopping: the gateway refused the runner token; killing running jobs", "jobs", r.running.Load())
		close(stopJobs)
		stopDelivering()
		<-allDone
		return cause
	}

	r.log.Info("shutting down: no more claims", "running_jobs", r.running.Load(), "timeout", r.cfg.ShutdownTimeout)
	select {
	case <-allDone:
	case <-time.After(r.cfg.ShutdownTimeout):
		r.log.Warn("shutdown timeout reached: cancelling running jobs", "jobs", r.running.Load())
		close(stopJobs)
		select {
		case <-allDone:
		case <-time.After(r.cfg.CancelGrace + deliverGrace):
			r.log.Error("giving up delivering the results of cancelled jobs")
			stopDelivering()
			<-allDone
		}
	}
	r.log.Info("runner stopped")
	return nil
}

// claimRound claims and starts jobs until ctx ends or a runner_update job
// stops it; it returns that job's manifest, or nil.
func (r *Runner) claimRound(ctx context.Context, fail context.CancelCauseFunc, start func(protocol.Job, time.Time, *slot, <-chan struct{})) *protocol.RunnerUpdateManifest {
	rd := newClaimRound(ctx)
	defer rd.stop(nil)
	r.mu.Lock()
	r.round = rd
	r.mu.Unlock()
	draining := make(chan struct{})
	go r.endRound(rd)
	r.claimJobs(rd, fail, func(job protocol.Job, claimedAt time.Time, sl *slot) {
		start(job, claimedAt, sl, draining)
	})
	close(draining) // jobs still waiting for their inputs are let go
	close(rd.stopped)
	if ctx.Err() != nil || !errors.Is(context.Cause(rd.quit), errHandover) {
		return nil
	}
	return r.takePending()
}

// separateFromJobs keeps the runner's token out of its jobs' reach as far
// as it can, and says what is left (docs/SECURITY.md).
func (r *Runner) separateFromJobs() {
	if err := hideFromJobs(); err != nil {
		r.log.Warn("could not make the runner's process undumpable: a job of its uid may read its environment", "err", err)
	}
	switch {
	case r.cfg.jobUsers != nil:
	case os.Geteuid() == 0:
		r.log.Warn("jobs run as root, as the runner: they can read its token file and memory; run them as another uid with --job-user")
	case r.cfg.TokenFile != "":
		r.log.Warn("jobs run as the runner's uid: they can read its token file; run the runner as root with --job-user, or give it a runner token without a token file",
			"token_file", r.cfg.TokenFile)
	}
}

func (r *Runner) prepareWorkDir() (string, error) {
	dir := r.cfg.WorkDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "outpost-runner-"); err != nil {
			return "", fmt.Errorf("creating a work dir: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "jobs"), 0o700); err != nil {
		return "", fmt.Errorf("work dir: %w", err)
	}
	if r.cfg.jobUsers != nil {
		// Jobs of other uids reach their own directories, and list none.
		for _, d := range []string{dir, filepath.Join(dir, "jobs")} {
			if err := os.Chmod(d, 0o711); err != nil {
				return "", fmt.Errorf("work dir: %w", err)
			}
		}
		if err := r.giveInitCache(dir); err != nil {
			return "", fmt.Errorf("work dir: %w", err)
		}
		if err := keepStateFromJobs(r.cfg.StateDir); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func (r *Runner) currentIntervals() protocol.Intervals {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.intervals
}

func (r *Runner) setIntervals(iv protocol.Intervals) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.intervals = withDefaults(iv)
}

func (r *Runner) heartbeatRequest() protocol.RunnerHeartbeatRequest {
	policy := r.cfg.Policy
	policy.Concurrency = r.cfg.Concurrency
	report, state := policy.Report(slices.DeleteFunc(slices.Clone(r.capabilities), func(c string) bool { return !isJobType(c) })), r.customer.report()
	var req protocol.RunnerHeartbeatRequest
	r.health.request(&req) // componenthealth.go
	r.mu.Lock()
	defer r.mu.Unlock()
	return protocol.RunnerHeartbeatRequest{
		HealthSpec:   req.HealthSpec,
		Health:       req.Health,
		Policy:       &report,
		Customer:     &state,
		Version:      Version,
		Platform:     Platform,
		Capabilities: r.capabilities,
		RunningJobs:  int(r.running.Load()),
		Update:       r.report,
		// AskHealthCheck: healthcheck.go.
		AskHealthCheck: healthCheck{r}.asking(),
	}
}

// sendHeartbeat reports the runner once; an accepted heartbeat delivered
// the update report it carried.
func (r *Runner) sendHeartbeat(ctx context.Context) error {
	return r.sendHeartbeatRequest(ctx, r.heartbeatRequest())
}

func (r *Runner) sendHeartbeatRequest(ctx context.Context, req protocol.RunnerHeartbeatRequest) error {
	ended := r.ended.Load() // before the request: a job ending meanwhile is news for the next
	resp, err := r.gw.RunnerHeartbeat(ctx, req)
	if err != nil {
		return err
	}
	r.beat.accepted(req, ended)
	r.setIntervals(resp.Intervals)
	healthCheck{r}.answered(req, resp, false)
	r.health.answered(req, resp)
	r.mu.Lock()
	if r.report == req.Update {
		r.report = nil
	}
	r.mu.Unlock()
	return nil
}

// heartbeats reports the runner to the gateway, every RunnerHeartbeat
// interval when it has news or else every QuietHeartbeat
// (quietheartbeat.go), and takes the intervals it answers with.
func (r *Runner) heartbeats(ctx context.Context, fail context.CancelCauseFunc) {
	for {
		iv := r.currentIntervals()
		if sleep(ctx, iv.RunnerHeartbeat()) != nil {
			return
		}
		req := r.heartbeatRequest()
		if !r.beat.due(req, iv.QuietHeartbeat(), r.gw.hasConnErrors(), r.ended.Load()) {
			continue
		}
		err := r.sendHeartbeatRequest(ctx, req)
		switch {
		case ctx.Err() != nil:
			return
		case unauthorized(err):
			fail(fmt.Errorf("%w: %w", ErrUnauthorized, err))
			return
		case err != nil:
			r.log.Warn("runner heartbeat failed", "err", err)
		}
	}
}

// jobSlots are the runner's places for jobs: Concurrency working places, and as many
// waiting places for jobs with deferred inputs (docs/architecture/operations.md, "Prestart").
type jobSlots struct{ work, wait chan struct{} }

func newJobSlots(n int) *jobSlots {
	return &jobSlots{work: make(chan struct{}, n), wait: make(chan struct{}, n)}
}

// slot is one job's place. Its methods do nothing on a nil slot.
type slot struct {
	slots   *jobSlots
	waiting bool // it holds a waiting place, not a working one
}

// release frees the job's place.
func (s *slot) release() {
	switch {
	case s == nil:
	case s.waiting:
		<-s.slots.wait
	default:
		<-s.slots.work
	}
}

// claimJobs long-polls for jobs while a working place is free and calls
// start with each job and its place, until the round ends (round.go). It asks for jobs with
// deferred inputs only while a waiting place is free too, and such a job
// takes that place instead. A refused token ends it through fail.
func (r *Runner) claimJobs(rd *claimRound, fail context.CancelCauseFunc, start func(job protocol.Job, claimedAt time.Time, sl *slot)) {
	ctx := rd.quit
	slots := r.slots.work
	reserved := false // a waiting place is held for this claim
	free := func() {
		<-slots
		if reserved {
			<-r.slots.wait
			reserved = false
		}
	}
	b := r.retry.backoff()
	var lost unanswered
	for ctx.Err() == nil {
		if r.paused() { // the customer paused it: no claim until resumed
			_ = sleep(ctx, customerWatch)
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		req := protocol.ClaimRequest{Capabilities: r.capabilities, Version: Version, Round: rd.id}
		if r.onlyNoop() {
			req.OnlyType = protocol.JobTypeNoop // the health check only: nothing to give up at the hand-over
		}
		select {
		case r.slots.wait <- struct{}{}:
			reserved = true
		default:
			// Every waiting place is taken: a job with deferred inputs
			// only once they are given (it will not wait).
			req.Capabilities = slices.DeleteFunc(slices.Clone(req.Capabilities), func(c string) bool { return c == protocol.CapabilityDeferredInputs })
			req.GivenInputs = len(req.Capabilities) < len(r.capabilities)
		}
		req.Unanswered = lost.report(&r.held)
		asked := time.Now()
		wait := r.currentIntervals().ClaimWait()
		job, err := r.gw.Claim(rd.polls, req, wait) // a job the poll brought is started even as the round ends
		lost.after(asked, err)
		switch {
		case job == nil && ctx.Err() != nil:
			free()
			return
		case unauthorized(err):
			free()
			fail(fmt.Errorf("%w: %w", ErrUnauthorized, err))
			return
		case err != nil:
			free()
			delay := b.next()
			r.log.Warn("claiming a job failed", "err", err, "retry_in", delay.Round(time.Millisecond))
			_ = sleep(ctx, delay)
		case job == nil:
			free()
			if time.Since(asked) < minClaimHold {
				_ = sleep(ctx, b.next())
			} else {
				b.reset()
			}
		default:
			b.reset()
			r.log.Info("job claimed", "job", job.ID, "type", job.Type, "attempt", job.Attempt)
			sl := &slot{slots: r.slots}
			if reserved {
				if job.InputsDeferred {
					sl.waiting = true
					<-slots // it waits in its waiting place, not a working one
				} else {
					<-r.slots.wait
				}
				reserved = false
			}
			start(*job, time.Now(), sl)
		}
	}
}

// capabilities are the job types the runner runs (its binary's and those of
// its job executables) and, when its own terraform plugin runs terraform
// jobs, protocol.CapabilityDeferredInputs and protocol.CapabilityModuleSync;
// sorted.
func capabilities(cfg Config) []string {
	types := builtinPlugins().Types()
	if _, elsewhere := cfg.jobExecutables[protocol.JobTypeTerraform]; !elsewhere {
		// This binary's terraform plugin takes deferred inputs and syncs
		// modules; another binary's may not.
		types = append(types, protocol.CapabilityDeferredInputs, protocol.CapabilityModuleSync)
	}
	for typ := range cfg.jobExecutables {
		if !slices.Contains(types, typ) {
			types = append(types, typ)
		}
	}
	slices.Sort(types)
	return types
}

func (r *Runner) newSupervisor(job protocol.Job, claimedAt time.Time, workDir string, stop <-chan struct{}) *supervisor {
	exe := r.cfg.Executable
	if e, ok := r.cfg.jobExecutables[job.Type]; ok {
		exe = e
	}
	return &supervisor{
		job:       job,
		claimedAt: claimedAt,
		gw:        r.gw,
		exe:       exe,
		dir:       filepath.Join(workDir, "jobs", jobDirName(job)),
		intervals: r.currentIntervals(),
		grace:     r.cfg.CancelGrace,
		retry:     r.retry,
		stop:      stop,
		log:       r.log.With("job", job.ID, "attempt", job.Attempt),
		extraEnv:  r.jobEnv,
		prio:      r.prio,
		completed: func(job protocol.Job, req protocol.CompleteRequest) {
			r.trial.completed(job, req)
			healthCheck{r}.completed(job, req)
		},
		beforeComplete: func(req protocol.CompleteRequest) {
			if job.Type == protocol.JobTypeRunnerUpdate && req.Status == protocol.StatusSucceeded {
				r.stopClaimsForUpdate(job.Manifest, req.Outputs)
			}
		},
		recentLog: r.recent.snapshot,
		users:     r.cfg.jobUsers,
		refuse:    r.customer.refuse,
		record:    r.record,
		metrics:   r.metrics,
	}
}

// drained waits until no job runs: false when one still ran after within,
// or ctx ended first. It polls the running count rather than waiting on the
// jobs' WaitGroup, which gets new jobs when the runner claims again after a
// drain that timed out (a WaitGroup must not be added to while waited on).
func (r *Runner) drained(ctx context.Context, within time.Duration) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for r.running.Load() > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}
