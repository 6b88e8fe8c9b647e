package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins/runnerupdate"
)

// The hand-over to a staged runner binary
// (docs/architecture/runner-update.md). The old runner stops claiming before the runner_update job
// completes (so the control plane's health job cannot reach it), lets its
// running jobs finish, then starts "<runner>.new" with its own arguments as
// a candidate. The candidate must say it is healthy (handover.go) within
// the deadline; then it drains and exits, the old runner keeps its binary
// as "<runner>.prev", moves the new one in place and execs it: the process
// (a systemd unit's main PID) stays the same. Otherwise the old code, which
// never stopped running, kills the candidate, drops the staged binary,
// reports the rollback and claims again.

// DefaultHealthDeadline is how long a candidate has when the manifest says
// nothing.
const DefaultHealthDeadline = 2 * time.Minute

// PrevSuffix names the previous binary, kept after a hand-over.
const PrevSuffix = ".prev"

// errHandover ends a round of claims for a hand-over.
var errHandover = errors.New("handing over to a new runner binary")

// stopClaimsForUpdate is called by a runner_update job's supervisor before
// it reports success: the runner stops claiming, and the job completes only
// once no claim of this runner is held any more.
func (r *Runner) stopClaimsForUpdate(manifest, outputs json.RawMessage) {
	var m protocol.RunnerUpdateManifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		r.log.Error("runner update: reading the manifest", "err", err)
		return
	}
	var out protocol.RunnerUpdateOutputs
	_ = json.Unmarshal(outputs, &out) // none: the release is unsigned, and refused
	r.stopClaimsFor(m, out.Release)
}

// stopClaimsFor makes the current round of claims end for a hand-over to
// the release of m, and waits for it.
func (r *Runner) stopClaimsFor(m protocol.RunnerUpdateManifest, rel protocol.RunnerRelease) {
	r.mu.Lock()
	r.pending, r.release = &m, rel
	rd := r.round
	r.mu.Unlock()
	if rd != nil {
		rd.stop(errHandover)
		<-rd.stopped
	}
}

// takePending returns the update a round stopped for.
func (r *Runner) takePending() *protocol.RunnerUpdateManifest {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.pending
	r.pending = nil
	return m
}

// handOver runs the staged binary as a candidate; it returns only when the
// hand-over failed (the old runner goes on) or ctx ended.
func (r *Runner) handOver(ctx context.Context, m protocol.RunnerUpdateManifest) {
	if r.holdsBack(ctx, m) {
		return
	}
	r.log.Info("runner update: handing over", "from", Version, "to", m.Version)
	reason := r.tryHandOver(ctx, m)
	if ctx.Err() != nil {
		return
	}
	r.rollBack(ctx, m, reason)
}

// drainTimeout is how long the running jobs may take before a hand-over.
func drainTimeout(m protocol.RunnerUpdateManifest) time.Duration {
	if m.DrainTimeoutMS <= 0 {
		return protocol.DefaultDrainTimeout
	}
	return time.Duration(m.DrainTimeoutMS) * time.Millisecond
}

// drainTimedOut gives the update up: the running jobs outlasted the drain
// timeout, and go on under this runner.
func (r *Runner) drainTimedOut(ctx context.Context, m protocol.RunnerUpdateManifest, drain time.Duration) {
	_ = os.Remove(r.cfg.Executable + runnerupdate.StagedSuffix)
	r.rollBack(ctx, m, fmt.Sprintf("the running jobs (%d) did not finish within the drain timeout (%s): "+
		"the update was given up and they go on under this runner", r.running.Load(), drain))
}

// rollBack records why the update failed and reports it before the runner
// claims again.
func (r *Runner) rollBack(ctx context.Context, m protocol.RunnerUpdateManifest, reason string) {
	r.log.Error("runner update rolled back: the previous runner goes on", "version", m.Version, "reason", reason)
	if h, ok, _ := r.customer.state.Held(); ok && h.Manifest.UpdateID == m.UpdateID {
		_ = r.customer.state.DropHeld() // accepted, and failed: its staged binary is gone
	}
	r.reportUpdate(ctx, protocol.RunnerUpdateReport{UpdateID: m.UpdateID, Version: m.Version, Status: protocol.UpdateRolledBack, Reason: reason})
}

// reportUpdate says rep with a heartbeat before the runner claims again.
func (r *Runner) reportUpdate(ctx context.Context, rep protocol.RunnerUpdateReport) {
	r.mu.Lock()
	r.report = &rep
	r.mu.Unlock()
	// Say so before claiming again, so the control plane has the reason
	// when the health job comes back to this (old) runner.
	for i := 0; i < 5 && ctx.Err() == nil; i++ {
		if r.sendHeartbeat(ctx) == nil {
			return
		}
		_ = sleep(ctx, time.Second)
	}
}

// tryHandOver returns why the hand-over failed; on success it does not
// return (the process became the new runner).
func (r *Runner) tryHandOver(ctx context.Context, m protocol.RunnerUpdateManifest) string {
	self := r.cfg.Executable
	staged := self + runnerupdate.StagedSuffix
	defer os.Remove(staged) // still there only when the hand-over failed
	deadline := time.Duration(m.HealthDeadlineMS) * time.Millisecond
	if deadline <= 0 {
		deadline = DefaultHealthDeadline
	}
	r.mu.Lock()
	rel := r.release
	r.mu.Unlock()
	if why := r.refuseRelease(m, rel); why != "" {
		return why
	}
	registration := strings.HasPrefix(r.cfg.Token, protocol.RegistrationTokenPrefix)
	switch {
	case r.cfg.Deployment != "" && registration:
		return "the runner's Deployment gives it a registration token: a new pod could not authenticate (give the chart a runner token)"
	case r.cfg.Deployment != "":
		return r.rollDeployment(ctx, m, rel.ImageDigest, deadline)
	case registration && r.cfg.TokenFile == "":
		return "the runner was started with a registration token and no token file: a new binary could not authenticate"
	}
	if got, err := fileDigest(staged); err != nil || got != rel.BinaryDigest {
		return fmt.Sprintf("the staged binary %s is not the signed one (%s, want %s; %v)", staged, got, rel.BinaryDigest, err)
	}
	c, err := startCandidate(staged, os.Args[1:])
	if err != nil {
		return fmt.Sprintf("starting the new runner: %v", err)
	}
	r.log.Info("runner update: new runner started, waiting for it to be healthy", "pid", c.cmd.Process.Pid, "deadline", deadline)
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	select {
	case <-c.healthy:
	case <-c.exited:
		return fmt.Sprintf("the new runner (%s) exited before it was healthy: %s", m.Version, exitText(c.cmd.ProcessState))
	case <-timer.C:
		c.stop(r.cfg.CancelGrace)
		return fmt.Sprintf("the new runner (%s) did not report healthy within %s", m.Version, deadline)
	case <-ctx.Done():
		c.stop(r.cfg.CancelGrace)
		return "the runner was stopped during the hand-over"
	}
	r.log.Info("runner update: the new runner is healthy; waiting for it to hand its jobs back", "version", m.Version)
	select {
	case <-c.exited:
	case <-time.After(r.cfg.ShutdownTimeout + r.cfg.CancelGrace + deliverGrace):
		c.stop(r.cfg.CancelGrace)
	}
	return r.execNew(self, staged)
}

// refuseRelease says why the runner will not switch to the release the
// staging job read ("" when it will): the customer did not consent to the
// update, or its signature does not verify with the runner's release keys.
func (r *Runner) refuseRelease(m protocol.RunnerUpdateManifest, rel protocol.RunnerRelease) string {
	if why := r.unusable(m, rel); why != "" {
		return why
	}
	if !r.accepted(m.Version) {
		return notAccepted(m.Version)
	}
	return ""
}

// unusable says why this runner could never switch to the release, even
// with the customer's consent ("" when it could): its signature does not
// verify, or a Deployment would roll to an image not pinned by digest.
func (r *Runner) unusable(m protocol.RunnerUpdateManifest, rel protocol.RunnerRelease) string {
	if err := verifyRelease(r.cfg.releaseKeys, m, rel); err != nil {
		return "refused: " + err.Error()
	}
	if r.cfg.Deployment != "" && rel.ImageDigest == "" {
		return fmt.Sprintf("refused: the signed release of runner %s names no image digest, and this runner rolls its Deployment only to an image pinned by digest", m.Version)
	}
	return ""
}

// execNew puts the new binary in place of the old, kept as .prev, and
// becomes it. It returns only when that failed (after putting the old
// binary back).
func (r *Runner) execNew(self, staged string) string {
	prev := self + PrevSuffix
	if err := os.Rename(self, prev); err != nil {
		return fmt.Sprintf("keeping the previous binary: %v", err)
	}
	if err := os.Rename(staged, self); err != nil {
		_ = os.Rename(prev, self)
		return fmt.Sprintf("putting the new binary in place: %v", err)
	}
	r.log.Info("runner update: running the new binary in this process", "binary", self, "previous", prev)
	if r.cfg.WorkDir == "" {
		os.RemoveAll(r.workDir) // Run's deferred removal does not run across exec
	}
	err := syscall.Exec(self, append([]string{self}, os.Args[1:]...), os.Environ())
	_ = os.Rename(self, staged)
	_ = os.Rename(prev, self)
	return fmt.Sprintf("executing the new binary: %v", err)
}

// fileDigest is the sha256 digest of the file at path.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// exitText says how a process ended.
func exitText(ps *os.ProcessState) string {
	if ps == nil {
		return "unknown"
	}
	return ps.String()
}

// candidate is the new runner binary, started by the old one.
type candidate struct {
	cmd     *exec.Cmd
	healthy chan struct{} // closed when it said so
	exited  chan struct{} // closed when it exited (cmd.ProcessState is set)
}

// startCandidate runs bin with args; it reports healthy on its fd 3.
func startCandidate(bin string, args []string) (*candidate, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pw.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), envHandoverFD+"=3")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{pw}
	if err := cmd.Start(); err != nil {
		pr.Close()
		return nil, err
	}
	c := &candidate{cmd: cmd, healthy: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer pr.Close()
		b := make([]byte, len(healthyLine))
		if _, err := io.ReadFull(pr, b); err == nil && string(b) == healthyLine {
			close(c.healthy)
		}
	}()
	go func() { _ = cmd.Wait(); close(c.exited) }()
	return c, nil
}

// stop ends the candidate: SIGTERM, then SIGKILL after grace.
func (c *candidate) stop(grace time.Duration) {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}
