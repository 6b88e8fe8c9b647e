package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

// eventStore is what the events read of their subjects.
type eventStore interface {
	emitStore
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
	if e == nil || e.n.cfg.Deliveries == nil {
		return nil
	}
	op, err := e.store.GetOperationByID(ctx, opID)
	if err != nil {
		return err
	}
	inst, err := e.store.GetInstall(ctx, op.OrgID, op.InstallID)
	if err != nil {
		return err
	}
	kind := strings.ReplaceAll(op.Kind, "_", " ")
	ev := contract.NotificationEvent{ID: eventID(typ, op.ID, detail), Type: typ, Time: time.Now().UTC(), OrgID: op.OrgID,
		AppID: inst.AppID, InstallID: inst.ID, OperationID: op.ID,
		Summary: fmt.Sprintf("Install %s: %s %s", inst.Name, kind, what)}
	return e.n.emit(ctx, ev, inst.Labels)
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
