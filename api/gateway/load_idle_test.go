package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// idleHeartbeat is what an idle runner of this version sends every
// RunnerHeartbeat: its version, job types, the customer's policy and state,
// and the health spec it holds (nothing changed, so no health report).
func idleHeartbeat(spec string) protocol.RunnerHeartbeatRequest {
	types := []string{protocol.JobTypeTerraform, protocol.JobTypeHelm, protocol.JobTypeAction}
	return protocol.RunnerHeartbeatRequest{Version: "v0.0.0-load", Capabilities: types, HealthSpec: spec,
		Policy: &protocol.CustomerPolicy{JobTypes: types, Destroy: protocol.DestroyAllow, Concurrency: 4,
			Digest: "sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"},
		Customer: &protocol.CustomerState{}}
}

// heartbeats is every runner's heartbeat loop as the runner runs it with
// nothing new to say (quiet heartbeats): its first heartbeat within the first
// RunnerHeartbeat (spread over the fleet), then one every QuietHeartbeat,
// the second at a random point of the first quiet interval so that the
// fleet's rate is steady at once. It keeps the health spec each answer hands
// over, as the runner does, and counts the requests and their bytes.
type heartbeats struct {
	sent, bytes atomic.Int64
	first       atomic.Int64 // runners whose first heartbeat was answered
	stop        context.CancelFunc
}

func startHeartbeats(b *testing.B, f *fleet, iv protocol.Intervals) *heartbeats {
	period := iv.RunnerHeartbeat()
	ctx, cancel := context.WithCancel(context.Background())
	h := &heartbeats{stop: cancel}
	b.Cleanup(cancel)
	for i, r := range f.runners {
		go func() {
			spec, answered := protocol.HealthSpecNone, false
			t := time.NewTimer(period * time.Duration(i) / time.Duration(len(f.runners)))
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				if answered {
					t.Reset(iv.QuietHeartbeat())
				} else {
					t.Reset(rand.N(iv.QuietHeartbeat()))
				}
				next, err := h.send(ctx, f.e, r.Token, spec)
				for try := 1; err != nil && ctx.Err() == nil && try < 3; try++ {
					// As the runner does: a connection the gateway closed as it
					// was reused (Go does not resend a POST) is tried again.
					sleepCtx(ctx, 100*time.Millisecond)
					next, err = h.send(ctx, f.e, r.Token, spec)
				}
				switch {
				case err != nil && ctx.Err() == nil:
					f.fail(err)
				case err == nil && !answered:
					answered = true
					h.first.Add(1)
				}
				if next != "" {
					spec = next
				}
			}
		}()
	}
	return h
}

// waitFirst waits until every runner's first heartbeat was answered: the
// gateway has recorded what each runner is and handed it its health spec.
func (h *heartbeats) waitFirst(b *testing.B, f *fleet) {
	deadline := time.Now().Add(5 * time.Minute)
	for h.first.Load() < int64(len(f.runners)) {
		if time.Now().After(deadline) {
			f.check(b)
			b.Fatalf("%d of %d runners' first heartbeats answered in 5 minutes", h.first.Load(), len(f.runners))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// send sends one heartbeat and answers the spec version the gateway handed
// over, if any.
func (h *heartbeats) send(ctx context.Context, e *env, tok, spec string) (string, error) {
	body, err := json.Marshal(idleHeartbeat(spec))
	if err != nil {
		return "", err
	}
	h.sent.Add(1)
	h.bytes.Add(int64(len(body)))
	rep, err := e.tryPost(ctx, tok, protocol.PathRunnerHeartbeat, body)
	if err != nil {
		return "", err
	}
	if rep.status != http.StatusOK {
		return "", fmt.Errorf("heartbeat: status %d: %s", rep.status, rep.body)
	}
	var resp protocol.RunnerHeartbeatResponse
	if err := json.Unmarshal(rep.body, &resp); err != nil {
		return "", err
	}
	if resp.Health != nil {
		return resp.Health.Version, nil
	}
	return "", nil
}

// perfRecord samples the process's stacks with perf(1) for d, into
// $OUTPOST_LOAD_PERF_DIR/<name>.data, when that variable names a directory
// (read it with `perf report -i FILE --no-children`); it returns at once and
// the returned func waits for perf to end.
func perfRecord(b *testing.B, pid int, name string, d time.Duration) (wait func()) {
	dir := os.Getenv("OUTPOST_LOAD_PERF_DIR")
	if dir == "" {
		return func() {}
	}
	out := filepath.Join(dir, name+".data")
	cmd := exec.Command("perf", "record", "-F", "499", "-g", "-p", fmt.Sprint(pid), "-o", out, "--", "sleep", fmt.Sprint(d.Seconds()))
	if err := cmd.Start(); err != nil {
		b.Fatalf("perf record: %v", err)
	}
	return func() {
		if err := cmd.Wait(); err != nil {
			b.Logf("perf record: %v", err)
		}
		b.Logf("gateway profile: %s", out)
	}
}

// idleFigures are what the gateway did over one window, per minute (CPU per
// second) and its resident set at the end.
type idleFigures struct {
	cpuPerSec, polls, xact, heartbeats, hbBytes float64
	rss                                         uint64
}

// idleWindow measures the gateway over 60 s (two heartbeat periods, more
// than two claim waits) while the fleet idles; hb, when not nil, counts
// the heartbeats sent meanwhile.
func idleWindow(b *testing.B, p *plane, e *env, f *fleet, hb *heartbeats, profile string) idleFigures {
	const window = 60 * time.Second
	cpu0, _ := p.api.usage(b)
	polls0, xact0, t0 := f.polls.Load(), dbStat(b, e, "xact_commit"), time.Now()
	var hbs0, bytes0 int64
	if hb != nil {
		hbs0, bytes0 = hb.sent.Load(), hb.bytes.Load()
	}
	perfDone := perfRecord(b, p.api.cmd.Process.Pid, profile, window)
	time.Sleep(window)
	cpu1, rss := p.api.usage(b)
	polls1, xact1, t1 := f.polls.Load(), dbStat(b, e, "xact_commit"), time.Now()
	perfDone()
	mins := t1.Sub(t0).Minutes()
	out := idleFigures{cpuPerSec: float64(cpu1-cpu0) / float64(time.Millisecond) / t1.Sub(t0).Seconds(),
		polls: float64(polls1-polls0) / mins, xact: float64(xact1-xact0) / mins, rss: rss}
	if hb != nil {
		out.heartbeats, out.hbBytes = float64(hb.sent.Load()-hbs0)/mins, float64(hb.bytes.Load()-bytes0)/mins
	}
	return out
}
