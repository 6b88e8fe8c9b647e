package appconfig

import (
	"reflect"
	"testing"
	"time"
)

// A health action's checks are the components it names, or its own
// install-level check; its result goes stale at the third time its cron
// triggers start it after the run, plus a step's timeout; one without a
// cron trigger never does.
func TestHealthChecksAndStaleness(t *testing.T) {
	c := load(t, withActions())
	ping, _ := c.Action("ping") // health, cron */5, the default 10m timeout
	if got := ping.HealthChecks(); !reflect.DeepEqual(got, []string{"action:ping"}) {
		t.Errorf("ping's checks %v, want its own check", got)
	}
	start := time.Date(2026, 11, 28, 10, 2, 30, 0, time.UTC)
	at, ok := ping.HealthStaleAfter(start)
	if want := time.Date(2026, 11, 28, 10, 25, 0, 0, time.UTC); !ok || !at.Equal(want) {
		t.Errorf("ping's result of %s goes stale at %s (%v), want %s: runs at 10:05, 10:10, 10:15, plus 10m", start, at, ok, want)
	}
	ping.Triggers = append(ping.Triggers, Trigger{Type: TriggerCron, Schedule: "3 * * * *"})
	if at, _ := ping.HealthStaleAfter(start); !at.Equal(time.Date(2026, 11, 28, 10, 20, 0, 0, time.UTC)) {
		t.Errorf("with a second cron at :03, stale at %s, want 10:20 (runs at 10:03, 10:05, 10:10)", at)
	}
	mig, _ := c.Action("migrate")
	if mig.HealthChecks() != nil {
		t.Errorf("migrate is no health check: %v", mig.HealthChecks())
	}
	mig.Health, mig.Components = true, []string{"db"}
	if got := mig.HealthChecks(); !reflect.DeepEqual(got, []string{"db"}) {
		t.Errorf("checks %v, want db", got)
	}
	if _, ok := mig.HealthStaleAfter(start); ok {
		t.Error("an action without a cron trigger has a stale time")
	}
}
