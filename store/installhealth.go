package store

import (
	"context"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// InstallHealth is an install's health: its worst component's (ties: the
// one in that state longest), or unknown while its runner is offline or no
// component has reported.
type InstallHealth struct {
	State string `json:"state"`
	// Since is when the install took this state as far as is known: the
	// deciding component's since, or when the runner was last seen.
	Since *time.Time `json:"since,omitempty"`
	// Component, Object and Condition say why.
	Component string `json:"component,omitempty"`
	Object    string `json:"object,omitempty"`
	Condition string `json:"condition,omitempty"`
}

// SummarizeHealth is the health of an install with these components whose
// runner is runner (nil: none), at now; a runner not seen within window is
// offline.
func SummarizeHealth(comps []ComponentHealth, runner *Runner, now time.Time, window time.Duration) InstallHealth {
	switch {
	case runner == nil || runner.LastSeenAt == nil:
		return InstallHealth{State: protocol.HealthUnknown, Condition: "its runner has never reported"}
	case now.Sub(*runner.LastSeenAt) > window:
		at := *runner.LastSeenAt
		return InstallHealth{State: protocol.HealthUnknown, Since: &at, Condition: "its runner is offline (last seen " + at.UTC().Format(time.RFC3339) + ")"}
	case len(comps) == 0:
		return InstallHealth{State: protocol.HealthUnknown, Condition: "no component has reported health yet"}
	}
	worst := staleAsUnknown(comps[0], now)
	for _, c := range comps[1:] {
		c = staleAsUnknown(c, now)
		r, w := protocol.HealthRank(c.State), protocol.HealthRank(worst.State)
		if r > w || (r == w && c.Since.Before(worst.Since)) {
			worst = c
		}
	}
	since := worst.Since
	return InstallHealth{State: worst.State, Since: &since, Component: worst.Component, Object: worst.Object, Condition: worst.Condition}
}

// ComponentHealthAsSeen is a component's health as a reader sees it: unknown
// (since the runner was last seen) while the install's runner is offline.
func ComponentHealthAsSeen(c ComponentHealth, runner *Runner, now time.Time, window time.Duration) ComponentHealth {
	if runner == nil || runner.LastSeenAt == nil || now.Sub(*runner.LastSeenAt) > window {
		c.State, c.Object, c.Condition = protocol.HealthUnknown, "", "the install's runner is offline"
		if runner != nil && runner.LastSeenAt != nil {
			c.Since = *runner.LastSeenAt
		}
		return c
	}
	return staleAsUnknown(c, now)
}

// staleAsUnknown shows a health-check action's result unknown once it is
// past its StaleAfter (its schedule should have brought newer ones).
func staleAsUnknown(c ComponentHealth, now time.Time) ComponentHealth {
	if c.StaleAfter == nil || now.Before(*c.StaleAfter) {
		return c
	}
	c.State, c.Since = protocol.HealthUnknown, *c.StaleAfter
	c.Condition = fmt.Sprintf("no result from %s since %s (it last said %q): its scheduled runs did not report",
		c.Source, c.ReportedAt.UTC().Format(time.RFC3339), c.Condition)
	return c
}

// HealthOfInstalls is the health of each of these installs (SummarizeHealth)
// at now, by install ID: two reads, whatever their number. An install the
// store does not know is unknown ("its runner has never reported").
func (s *Store) HealthOfInstalls(ctx context.Context, installIDs []string, now time.Time, window time.Duration) (map[string]InstallHealth, error) {
	comps, err := s.ComponentHealthOf(ctx, installIDs...)
	if err != nil {
		return nil, err
	}
	var runners []Runner
	if err := s.db.WithContext(ctx).Where("install_id IN ?", installIDs).Find(&runners).Error; err != nil {
		return nil, fmt.Errorf("store: runners of installs: %w", err)
	}
	runnerOf := map[string]*Runner{}
	for i, r := range runners {
		if r.InstallID != nil {
			runnerOf[*r.InstallID] = &runners[i]
		}
	}
	out := make(map[string]InstallHealth, len(installIDs))
	for _, id := range installIDs {
		out[id] = SummarizeHealth(comps[id], runnerOf[id], now, window)
	}
	return out, nil
}
