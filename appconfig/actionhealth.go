package appconfig

import (
	"slices"
	"time"
)

// HealthCheckPrefix names the install-level check of a health action that
// names no component: "action:<name>". A component's name cannot hold ':'.
const HealthCheckPrefix = "action:"

// HealthStaleRuns is how many scheduled runs may pass without a newer
// result before a health action's result reads unknown.
const HealthStaleRuns = 3

// HealthChecks names what a health action's result is recorded as: each
// component it names, or its install-level check "action:<name>" (nil for
// an action that is not a health check).
func (a *Action) HealthChecks() []string {
	switch {
	case !a.Health:
		return nil
	case len(a.Components) > 0:
		return append([]string(nil), a.Components...)
	}
	return []string{HealthCheckPrefix + a.Name}
}

// HealthStaleAfter is when the result of a health action's run started at
// start stops counting: the HealthStaleRuns-th time its cron triggers
// start it after start, plus one step's timeout (the run that would replace
// it may still be running). An action without a cron trigger has no such
// time (false): its result stands until the next run.
func (a *Action) HealthStaleAfter(start time.Time) (time.Time, bool) {
	var fires []time.Time
	for _, t := range a.Triggers {
		if t.Type != TriggerCron {
			continue
		}
		sched, err := cronParser.Parse(t.Schedule)
		if err != nil {
			continue // refused at sync
		}
		at := start.UTC() // Temporal's schedules run in UTC
		for range HealthStaleRuns {
			at = sched.Next(at)
			fires = append(fires, at)
		}
	}
	if len(fires) == 0 {
		return time.Time{}, false
	}
	slices.SortFunc(fires, time.Time.Compare) // the HealthStaleRuns-th earliest of all the triggers' next times
	return fires[HealthStaleRuns-1].Add(time.Duration(a.TimeoutSeconds) * time.Second), true
}
