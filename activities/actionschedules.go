package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/internal/schedules"
	"github.com/outpost-dev/outpost/store"
)

// actionScheduleStore is what reconciling action schedules reads.
type actionScheduleStore interface {
	GetInstallByID(ctx context.Context, id string) (store.Install, error)
	ForgetCheckHealth(ctx context.Context, installID string, keep []string) error
}

// ActionSchedules keeps an install's cron actions as Temporal schedules.
type ActionSchedules struct {
	store     actionScheduleStore
	render    *renderer
	schedules client.ScheduleClient // nil: no Temporal client (a test's registry)
	taskQueue string
}

// ReconcileActionSchedules makes the install's action schedules those of
// config version (0: none, after a deprovision), and forgets the health
// results of checks that version's health actions no longer make.
func (a *ActionSchedules) ReconcileActionSchedules(ctx context.Context, installID string, version int) error {
	inst, err := a.store.GetInstallByID(ctx, installID)
	if err != nil {
		return err
	}
	var cfg *appconfig.Config
	if version > 0 {
		if cfg, _, err = a.render.installConfig(ctx, inst.OrgID, inst.AppID, version); err != nil {
			return err
		}
	}
	if err := a.store.ForgetCheckHealth(ctx, installID, HealthChecks(cfg)); err != nil {
		return err
	}
	if a.schedules == nil {
		return errors.New("action schedules: the worker has no Temporal client")
	}
	return ReconcileActionSchedules(ctx, a.schedules, a.taskQueue, installID, CronActions(cfg))
}

// HealthChecks are the checks the health actions of cfg record (nil cfg:
// none).
func HealthChecks(cfg *appconfig.Config) []string {
	var out []string
	if cfg != nil {
		for _, act := range cfg.Actions {
			out = append(out, act.HealthChecks()...)
		}
	}
	return out
}

// CronActions are the cron expressions of each action of cfg that has cron
// triggers (nil cfg: none).
func CronActions(cfg *appconfig.Config) map[string][]string {
	out := map[string][]string{}
	if cfg == nil {
		return out
	}
	for _, act := range cfg.Actions {
		for _, t := range act.Triggers {
			if t.Type == appconfig.TriggerCron {
				out[act.Name] = append(out[act.Name], t.Schedule)
			}
		}
	}
	return out
}

// ReconcileActionSchedules creates or updates the schedule of each action of
// want (action → its cron expressions) and deletes the install's other
// action schedules. A schedule's runs start contract.WorkflowActionRun on
// queue; one still running skips the next (overlap SKIP).
func ReconcileActionSchedules(ctx context.Context, sc client.ScheduleClient, queue, installID string, want map[string][]string) error {
	for _, action := range slices.Sorted(maps.Keys(want)) {
		if err := setActionSchedule(ctx, sc, queue, installID, action, want[action]); err != nil {
			return err
		}
	}
	have, err := listActionSchedules(ctx, sc, installID)
	if err != nil {
		return err
	}
	for _, action := range have {
		if _, keep := want[action]; keep {
			continue
		}
		if err := schedules.Delete(ctx, sc, contract.ActionScheduleID(installID, action)); err != nil {
			return err
		}
	}
	return nil
}

// setActionSchedule creates an action's schedule, or updates it to crons.
func setActionSchedule(ctx context.Context, sc client.ScheduleClient, queue, installID, action string, crons []string) error {
	spec := client.ScheduleSpec{CronExpressions: slices.Clone(crons)}
	// Temporal adds the time of each run to the ID: install/<id>/action/<name>/cron-<time>.
	wf := &client.ScheduleWorkflowAction{ID: contract.ActionRunWorkflowID(installID, action, "cron"),
		Workflow: contract.WorkflowActionRun, Args: []any{contract.ActionRunInput{InstallID: installID, Action: action}}, TaskQueue: queue}
	return schedules.Put(ctx, sc, contract.ActionScheduleID(installID, action), spec, wf)
}

// listActionSchedules names the actions the install has a schedule of.
func listActionSchedules(ctx context.Context, sc client.ScheduleClient, installID string) ([]string, error) {
	prefix, suffix := contract.ActionScheduleID(installID, ""), "/schedule"
	prefix = strings.TrimSuffix(prefix, suffix) // "install/<id>/action/"
	// Only the install's: visibility finds them by prefix, so reconciling costs
	// the same at 10 installs or 10,000 (docs/benchmarks-day-two.md, cron actions).
	it, err := sc.List(ctx, client.ScheduleListOptions{Query: fmt.Sprintf("ScheduleId STARTS_WITH %q", prefix)})
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	var out []string
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("list schedules: %w", err)
		}
		if name, ok := strings.CutPrefix(e.ID, prefix); ok && strings.HasSuffix(name, suffix) {
			out = append(out, strings.TrimSuffix(name, suffix))
		}
	}
	return out, nil
}
