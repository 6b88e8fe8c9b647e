package gateway_test

// Deferred inputs: claims and heartbeats that wait for inputs to be given.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/protocol"
)

// A job queued with deferred inputs: the claim says so; a heartbeat that
// asks for the inputs is held until they are given and answers with them;
// one that does not ask never carries them.
func TestHeldHeartbeatAnswersWithDeferredInputs(t *testing.T) {
	e := newEnv(t, gateway.Config{Intervals: short})
	r := e.newRunner("customer-1")
	ctx := context.Background()
	queued := e.enqueueDeferred(r, "job-deferred")
	// A runner that does not say it runs such jobs is not given one.
	if j, err := e.claimAs(ctx, r.Token, protocol.ClaimRequest{Capabilities: []string{protocol.JobTypeNoop}}); err != nil || j != nil {
		t.Fatalf("claim without %s: %+v %v, want none", protocol.CapabilityDeferredInputs, j, err)
	}
	claimed, err := e.claimAs(ctx, r.Token, protocol.ClaimRequest{Capabilities: []string{protocol.JobTypeNoop, protocol.CapabilityDeferredInputs}})
	if err != nil || claimed == nil {
		t.Fatalf("claim: %+v %v", claimed, err)
	}
	job := *claimed
	if !job.InputsDeferred || job.InputsWaitMS != 90_000 {
		t.Fatalf("claimed %+v: want inputs_deferred, with its wait bound", job)
	}
	path := jobPath(protocol.PathJobHeartbeat, job.ID)
	var hb protocol.JobHeartbeatResponse
	e.post(ctx, r.Token, path, protocol.JobHeartbeatRequest{Attempt: 1, WantInputs: true}).decode(t, http.StatusOK, &hb)
	if hb.Inputs != nil {
		t.Fatalf("inputs %s before any were given", hb.Inputs)
	}
	renewed := hb.LeaseExpiresAt

	got := e.heldHeartbeat(r.Token, queued.ID, protocol.JobHeartbeatRequest{Attempt: 1, WaitMS: short.JobHeartbeatMS, WantInputs: true}, renewed)
	if err := e.s.ProvideJobInputs(ctx, queued.ID, json.RawMessage(`{"variables":{"x":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	(<-got).decode(t, http.StatusOK, &hb)
	if string(hb.Inputs) != `{"variables":{"x":"1"}}` {
		t.Fatalf("the held heartbeat answered inputs %s", hb.Inputs)
	}
	// Given once: a second call (a retried activity) changes nothing.
	if err := e.s.ProvideJobInputs(ctx, queued.ID, json.RawMessage(`{"variables":{"x":"2"}}`)); err != nil {
		t.Fatal(err)
	}
	e.post(ctx, r.Token, path, protocol.JobHeartbeatRequest{Attempt: 1, WantInputs: true}).decode(t, http.StatusOK, &hb)
	if string(hb.Inputs) != `{"variables":{"x":"1"}}` {
		t.Fatalf("inputs after a second call: %s", hb.Inputs)
	}
	hb = protocol.JobHeartbeatResponse{}
	e.post(ctx, r.Token, path, protocol.JobHeartbeatRequest{Attempt: 1}).decode(t, http.StatusOK, &hb)
	if hb.Inputs != nil {
		t.Fatalf("a heartbeat that did not ask carried the inputs %s", hb.Inputs)
	}
	// A job queued with its inputs takes no more.
	other := e.enqueue(r, "job-not-deferred")
	if err := e.s.ProvideJobInputs(ctx, other.ID, json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "not queued to wait for inputs") {
		t.Fatalf("inputs for a job queued with its inputs: %v", err)
	}
}

// A runner whose every waiting place is taken asks without
// CapabilityDeferredInputs but with GivenInputs: a job queued with deferred
// inputs is not given to it while they are missing, and its held claim
// answers with that job as soon as they are given — not at the end of the
// claim's wait.
func TestClaimWithFullWaitingPlacesTakesAJobOnceItsInputsAreGiven(t *testing.T) {
	iv := short
	iv.ClaimWaitMS = 60_000 // longer than the test waits: the claim must be woken
	e := newEnv(t, gateway.Config{Intervals: iv})
	r := e.newRunner("customer-1")
	ctx := context.Background()
	queued := e.enqueueDeferred(r, "job-deferred")
	full := protocol.ClaimRequest{Capabilities: []string{protocol.JobTypeNoop}, GivenInputs: true}
	got := make(chan claimResult, 1)
	go func() {
		j, err := e.claimAs(ctx, r.Token, full)
		got <- claimResult{j, err}
	}()
	select {
	case c := <-got:
		t.Fatalf("claimed %+v (%v) before the job's inputs were given", c.job, c.err)
	case <-time.After(500 * time.Millisecond):
	}
	if err := e.s.ProvideJobInputs(ctx, queued.ID, json.RawMessage(`{"variables":{"x":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-got:
		if c.err != nil || c.job == nil || c.job.ID != queued.ID || !c.job.InputsDeferred {
			t.Fatalf("held claim answered %+v %v, want %s", c.job, c.err, queued.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the held claim was not woken when the job's inputs were given")
	}
	var hb protocol.JobHeartbeatResponse
	e.post(ctx, r.Token, jobPath(protocol.PathJobHeartbeat, queued.ID), protocol.JobHeartbeatRequest{Attempt: 1, WantInputs: true}).
		decode(t, http.StatusOK, &hb)
	if string(hb.Inputs) != `{"variables":{"x":"1"}}` {
		t.Fatalf("the first heartbeat answered inputs %s", hb.Inputs)
	}
	// Without GivenInputs (a runner that never runs such jobs), a job with
	// its inputs given is still not its.
	second := e.enqueueDeferred(r, "job-deferred-2")
	if err := e.s.ProvideJobInputs(ctx, second.ID, json.RawMessage(`{"variables":{}}`)); err != nil {
		t.Fatal(err)
	}
	shortCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if j, err := e.claimAs(shortCtx, r.Token, protocol.ClaimRequest{Capabilities: []string{protocol.JobTypeNoop}}); j != nil {
		t.Fatalf("a runner without deferred inputs was given %s (%v)", j.ID, err)
	}
}
