package runner

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/customer"
	"github.com/outpost-dev/outpost/runner/plugins/runnerupdate"
)

// An update the customer has not accepted waits as "available": the runner
// verifies the release, keeps the staged binary as "<runner>.available"
// and the release in its state directory (customer.HeldUpdate), and says
// so (protocol.UpdateHeld). When the customer runs `outpost-runner update
// accept VERSION`, the running runner sees it (watchCustomer) and hands
// over to the held release as it would have at once with its consent; the
// new version then reports the update accepted.

// HeldSuffix names the binary of an update waiting for the customer.
const HeldSuffix = ".available"

// accepted says whether the customer lets the runner switch to version.
func (r *Runner) accepted(version string) bool {
	if r.cfg.AutoUpdate || r.cfg.AcceptUpdate == version {
		return true
	}
	v, err := r.customer.state.Accepted()
	return err == nil && v == version
}

// notAccepted is why a runner does not switch to version without the
// customer.
func notAccepted(version string) string {
	return fmt.Sprintf("runner %s is available, but the customer has not accepted it: it waits until the customer runs "+
		"`outpost-runner update accept %s` on the runner (or runs it with --auto-update or --accept-update %s; "+
		"chart: update.auto, update.accept)", version, version, version)
}

// holdsBack keeps the update of m, whose release this runner could switch
// to, for the customer to accept, and reports it held; false when the
// customer accepted it already or the release is unusable (the hand-over
// goes on and refuses it, saying why, before any consent is asked).
func (r *Runner) holdsBack(ctx context.Context, m protocol.RunnerUpdateManifest) bool {
	r.mu.Lock()
	rel := r.release
	r.mu.Unlock()
	if r.unusable(m, rel) != "" || r.accepted(m.Version) {
		return false
	}
	reason := notAccepted(m.Version)
	if err := r.hold(m, rel); err != nil {
		r.rollBack(ctx, m, fmt.Sprintf("%s; it could not be kept for the customer: %v", reason, err))
		return true
	}
	r.switching.Store(false)
	r.log.Warn("runner update held until the customer accepts it", "version", m.Version, "accept", "outpost-runner update accept "+m.Version)
	r.reportUpdate(ctx, protocol.RunnerUpdateReport{UpdateID: m.UpdateID, Version: m.Version, Status: protocol.UpdateHeld, Reason: reason})
	return true
}

// hold keeps the staged binary (when the runner runs one) and the release.
func (r *Runner) hold(m protocol.RunnerUpdateManifest, rel protocol.RunnerRelease) error {
	staged := r.cfg.Executable + runnerupdate.StagedSuffix
	defer os.Remove(staged)
	if r.cfg.Deployment == "" {
		if got, err := fileDigest(staged); err != nil || got != rel.BinaryDigest {
			return fmt.Errorf("the staged binary %s is not the signed one (%s, want %s; %v)", staged, got, rel.BinaryDigest, err)
		}
		if err := os.Rename(staged, r.cfg.Executable+HeldSuffix); err != nil {
			return err
		}
	}
	return r.customer.state.Hold(customer.HeldUpdate{Manifest: m, Release: rel, Since: time.Now().UTC().Truncate(time.Second)})
}

// switchIfAccepted starts the hand-over to the held update once the
// customer accepted it.
func (r *Runner) switchIfAccepted(ctx context.Context) {
	h, ok, err := r.customer.state.Held()
	if err != nil || !ok || !r.accepted(h.Manifest.Version) || r.trial != nil || !r.switching.CompareAndSwap(false, true) {
		return
	}
	r.log.Info("the customer accepted the runner update: handing over", "version", h.Manifest.Version)
	if r.cfg.Deployment == "" {
		if err := os.Rename(r.cfg.Executable+HeldSuffix, r.cfg.Executable+runnerupdate.StagedSuffix); err != nil {
			r.log.Error("the held runner update's binary is gone: the customer's acceptance cannot be carried out", "err", err)
			_ = r.customer.state.DropHeld()
			return
		}
	}
	r.stopClaimsFor(h.Manifest, h.Release)
	// The gateway queues the new version's health job, which the
	// candidate (claiming noop jobs only) runs.
	r.reportUpdate(ctx, protocol.RunnerUpdateReport{UpdateID: h.Manifest.UpdateID, Version: h.Manifest.Version,
		Status: protocol.UpdateAccepting, Reason: "the customer accepted runner " + h.Manifest.Version})
}

// acceptedReport is the report a runner makes at its start when it runs
// the update its customer accepted; the held update is then forgotten.
func (r *Runner) acceptedReport() *protocol.RunnerUpdateReport {
	h, ok, err := r.customer.state.Held()
	if err != nil || !ok || h.Manifest.Version != Version || r.trial != nil {
		return nil
	}
	if err := r.customer.state.DropHeld(); err != nil {
		r.log.Warn("the accepted runner update could not be forgotten", "err", err)
	}
	_ = os.Remove(r.cfg.Executable + HeldSuffix)
	return &protocol.RunnerUpdateReport{UpdateID: h.Manifest.UpdateID, Version: h.Manifest.Version, Status: protocol.UpdateAccepted,
		Reason: "the customer accepted runner " + h.Manifest.Version}
}
