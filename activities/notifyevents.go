package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/planpolicy"
	"github.com/outpost-dev/outpost/store"
)

// eventStore is what the events read of their subjects.
type eventStore interface {
	emitStore
	QueueEvent(ctx context.Context, ev contract.NotificationEvent, offlineMinutes int) error
	GetOperationByID(ctx context.Context, opID string) (store.InstallOperation, error)
	GetInstall(ctx context.Context, orgID, id string) (store.Install, error)
	GetReleaseByID(ctx context.Context, id string) (store.Release, error)
}

// events builds the events of operations and releases and emits them.
type events struct {
	store eventStore
	n     *notifier
}

func newEvents(s eventStore, cfg NotifyConfig) *events {
	return &events{store: s, n: &notifier{store: s, cfg: cfg}}
}

// operationEvent emits an operation's event: detail tells one happening of
// it from another (a step's name).
func (e *events) operationEvent(ctx context.Context, opID, typ, detail, what string) error {
	return e.sendOperationEvent(ctx, opID, typ, detail, what, func(ev contract.NotificationEvent, labels map[string]string) error {
		return e.n.emit(ctx, ev, labels)
	})
}

// queueOperationEvent writes an operation's event to the outbox, which the
// worker's dispatcher delivers: the activity that reports it waits for no
// delivery to start.
func (e *events) queueOperationEvent(ctx context.Context, opID, typ, detail, what string) error {
	return e.sendOperationEvent(ctx, opID, typ, detail, what, func(ev contract.NotificationEvent, _ map[string]string) error {
		return e.store.QueueEvent(ctx, ev, 0)
	})
}

// sendOperationEvent gives an operation's event and its install's labels to
// send, when notifications are on.
func (e *events) sendOperationEvent(ctx context.Context, opID, typ, detail, what string,
	send func(contract.NotificationEvent, map[string]string) error) error {
	if e == nil || e.n.cfg.Deliveries == nil {
		return nil
	}
	ev, labels, err := e.ofOperation(ctx, opID, typ, detail, what)
	if err != nil {
		return err
	}
	return send(ev, labels)
}

// ofOperation is an operation's event, "Install NAME: KIND WHAT", and its
// install's labels.
func (e *events) ofOperation(ctx context.Context, opID, typ, detail, what string) (contract.NotificationEvent, map[string]string, error) {
	op, err := e.store.GetOperationByID(ctx, opID)
	if err != nil {
		return contract.NotificationEvent{}, nil, err
	}
	inst, err := e.store.GetInstall(ctx, op.OrgID, op.InstallID)
	if err != nil {
		return contract.NotificationEvent{}, nil, err
	}
	kind := strings.ReplaceAll(op.Kind, "_", " ")
	ev := contract.NotificationEvent{ID: eventID(typ, op.ID, detail), Type: typ, Time: time.Now().UTC(), OrgID: op.OrgID,
		AppID: inst.AppID, InstallID: inst.ID, OperationID: op.ID,
		Summary: fmt.Sprintf("Install %s: %s %s", inst.Name, kind, what)}
	return ev, inst.Labels, nil
}

// driftFound queues drift.found for a drift check's step whose plan is not
// empty.
func (e *events) driftFound(ctx context.Context, opID, step string, s contract.PlanSummary) error {
	what := fmt.Sprintf("found drift in %s (%d to add, %d to change, %d to destroy)", step, s.Add, s.Change, s.Destroy)
	return e.queueOperationEvent(ctx, opID, contract.EventDriftFound, step, what)
}

// policyDenied queues policy.denied for a step failed by plan policies
// (errMsg as planpolicy.Denied makes it): the summary names the policies,
// not their messages (which may quote the plan).
func (e *events) policyDenied(ctx context.Context, opID, step, errMsg string) error {
	names := planpolicy.DeniedBy(errMsg)
	if len(names) == 0 {
		return nil
	}
	what := "plan of " + step + " denied by " + strings.Join(names, ", ")
	return e.queueOperationEvent(ctx, opID, contract.EventPolicyDenied, step, what)
}

// operationEnded emits operation.succeeded or operation.failed.
func (e *events) operationEnded(ctx context.Context, opID string, st status.Op) error {
	switch st {
	case status.OpSucceeded:
		return e.operationEvent(ctx, opID, contract.EventOperationSucceeded, "", "succeeded")
	case status.OpFailed:
		return e.operationEvent(ctx, opID, contract.EventOperationFailed, "", "failed")
	}
	return nil
}

// releaseEnded emits release.finished or release.halted.
func (e *events) releaseEnded(ctx context.Context, releaseID string, st status.Release) error {
	typ, what := "", ""
	switch st {
	case status.ReleaseSucceeded:
		typ, what = contract.EventReleaseFinished, "finished"
	case status.ReleaseHalted:
		typ, what = contract.EventReleaseHalted, "halted"
	}
	if e == nil || typ == "" || e.n.cfg.Deliveries == nil {
		return nil
	}
	r, err := e.store.GetReleaseByID(ctx, releaseID)
	if err != nil {
		return err
	}
	ev := contract.NotificationEvent{ID: eventID(typ, r.ID), Type: typ, Time: time.Now().UTC(), OrgID: r.OrgID,
		AppID: r.AppID, ReleaseID: r.ID, Summary: fmt.Sprintf("Release %s of config version %d %s", r.ID, r.ConfigVersion, what)}
	if st == status.ReleaseHalted && r.Error != "" {
		ev.Summary += ": " + r.Error // the install that failed, or failed the health gate, and why
	}
	return e.n.emit(ctx, ev, nil)
}
