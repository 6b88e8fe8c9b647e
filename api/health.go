package api

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/store"
)

// healthTransitionsShown is how many transitions GET .../health shows.
const healthTransitionsShown = 50

// getInstallHealth is an install's health, its components' and their
// latest transitions (docs/architecture/health.md).
func (s *Server) getInstallHealth(c echo.Context) error {
	return answerByID(c, s.store.GetInstall, s.installHealthView)
}

func (s *Server) installHealthView(ctx context.Context, inst store.Install) (wire.InstallHealth, error) {
	runner, err := s.installRunner(ctx, inst)
	if err != nil {
		return wire.InstallHealth{}, err
	}
	comps, err := s.store.ComponentHealthOf(ctx, inst.ID)
	if err != nil {
		return wire.InstallHealth{}, err
	}
	trans, err := s.store.HealthTransitions(ctx, inst.ID, healthTransitionsShown)
	if err != nil {
		return wire.InstallHealth{}, err
	}
	now := s.now()
	out := wire.InstallHealth{InstallID: inst.ID, Health: healthView(store.SummarizeHealth(comps[inst.ID], runner, now, s.onlineWindow)),
		Components: []wire.ComponentHealth{}, Transitions: make([]wire.HealthTransition, len(trans))}
	for _, ch := range comps[inst.ID] {
		ch = store.ComponentHealthAsSeen(ch, runner, now, s.onlineWindow)
		out.Components = append(out.Components, wire.ComponentHealth{Component: ch.Component, State: ch.State, Since: ch.Since,
			Object: ch.Object, Condition: ch.Condition, ReportedAt: ch.ReportedAt, Source: ch.Source, StaleAfter: ch.StaleAfter})
	}
	for i, t := range trans {
		out.Transitions[i] = wire.HealthTransition{Component: t.Component, From: t.FromState, To: t.ToState, Object: t.Object,
			Condition: t.Condition, At: t.At}
	}
	return out, nil
}

func healthView(h store.InstallHealth) wire.InstallHealthSummary {
	return wire.InstallHealthSummary{State: h.State, Since: h.Since, Component: h.Component, Object: h.Object, Condition: h.Condition}
}

// installsHealth is the health of each install, for the list.
func (s *Server) installsHealth(c echo.Context, insts []store.Install, runners []store.Runner) (map[string]wire.InstallHealthSummary, error) {
	ids := make([]string, len(insts))
	for i, inst := range insts {
		ids[i] = inst.ID
	}
	comps, err := s.store.ComponentHealthOf(c.Request().Context(), ids...)
	if err != nil {
		return nil, err
	}
	runnerOf := map[string]*store.Runner{}
	for i, r := range runners {
		if r.InstallID != nil {
			runnerOf[*r.InstallID] = &runners[i]
		}
	}
	now, out := s.now(), map[string]wire.InstallHealthSummary{}
	for _, id := range ids {
		out[id] = healthView(store.SummarizeHealth(comps[id], runnerOf[id], now, s.onlineWindow))
	}
	return out, nil
}
