package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"

	"github.com/outpost-dev/outpost/store"
)

// byID is how the store reads an org's object by its ID.
type byID[T any] func(ctx context.Context, orgID, id string) (T, error)

// getByID answers the object get reads for the path's id (in the token's
// org), as view shows it.
func getByID[T, W any](c echo.Context, get byID[T], view func(T) W) error {
	return answerByID(c, get, func(_ context.Context, obj T) (W, error) { return view(obj), nil })
}

// answerByID answers what view reads of the object get reads for the
// path's id (in the token's org).
func answerByID[T, W any](c echo.Context, get byID[T], view func(ctx context.Context, obj T) (W, error)) error {
	ctx := c.Request().Context()
	obj, err := get(ctx, orgID(c), c.Param("id"))
	if err != nil {
		return err
	}
	w, err := view(ctx, obj)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, w)
}

// listOfOrg answers what list reads of the token's org, as answer shows it.
func listOfOrg[T, L any](c echo.Context, list func(ctx context.Context, orgID string) ([]T, error), answer func([]T) L) error {
	items, err := list(c.Request().Context(), orgID(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, answer(items))
}

// pathRequest reads the object the path's id names with get (in the token's
// org), then binds the request body into a T.
func pathRequest[T, P any](c echo.Context, get byID[P]) (P, T, error) {
	var req T
	obj, err := get(c.Request().Context(), orgID(c), c.Param("id"))
	if err != nil {
		return obj, req, err
	}
	return obj, req, apierr.Bind(c, &req)
}

// deleteByID deletes the path's id (in the token's org) with del.
func deleteByID(c echo.Context, del func(ctx context.Context, orgID, id string) error) error {
	if err := del(c.Request().Context(), orgID(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// installList reads what the list routes below an install take: the
// install (in the token's org) and ?limit.
func (s *Server) installList(c echo.Context) (store.Install, int, error) {
	inst, err := s.store.GetInstall(c.Request().Context(), orgID(c), c.Param("id"))
	if err != nil {
		return store.Install{}, 0, err
	}
	limit, err := queryInt(c, "limit", defaultListLimit, 1, maxListLimit)
	return inst, limit, err
}

// listBelowInstall answers a list route below an install: what list reads
// for the path's install and ?limit, as answer shows it.
func listBelowInstall[T, L any](s *Server, c echo.Context,
	list func(ctx context.Context, orgID, installID string, limit int) ([]T, error), answer func([]T) L) error {
	inst, limit, err := s.installList(c)
	if err != nil {
		return err
	}
	items, err := list(c.Request().Context(), inst.OrgID, inst.ID, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, answer(items))
}

// pathChild reads the object named by the path parameter param with get,
// and answers not found unless it belongs to the path's id, which parent
// reads (in the token's org) — exactly as if it did not exist.
func pathChild[P, T any](c echo.Context, parent byID[P], parentID func(P) string, param, what string,
	get byID[T], parentOf func(T) string) (T, error) {
	var zero T
	ctx, org := c.Request().Context(), orgID(c)
	p, err := parent(ctx, org, c.Param("id"))
	if err != nil {
		return zero, err
	}
	id := c.Param(param)
	obj, err := get(ctx, org, id)
	if err != nil {
		return zero, err
	}
	if parentOf(obj) != parentID(p) {
		return zero, fmt.Errorf("%s %s: %w", what, id, store.ErrNotFound)
	}
	return obj, nil
}

// installChild is pathChild below the path's install.
func installChild[T any](s *Server, c echo.Context, param, what string, get byID[T], installOf func(T) string) (T, error) {
	return pathChild(c, s.store.GetInstall, func(i store.Install) string { return i.ID }, param, what, get, installOf)
}

// namedRuns is, for listBelowInstall, list reading the runs of the
// install's action or runbook the path parameter param names.
func namedRuns[R any](c echo.Context, param string,
	list func(ctx context.Context, orgID, installID, name string, limit int) ([]R, error),
) func(ctx context.Context, orgID, installID string, limit int) ([]R, error) {
	return func(ctx context.Context, orgID, installID string, limit int) ([]R, error) {
		return list(ctx, orgID, installID, c.Param(param), limit)
	}
}

// answerWithSteps answers a run (runID) as view shows it with its steps,
// which steps reads.
func answerWithSteps[S, V any](c echo.Context, code int, runID string, steps func(ctx context.Context, runID string) ([]S, error),
	view func([]S) V) error {
	ss, err := steps(c.Request().Context(), runID)
	if err != nil {
		return err
	}
	return c.JSON(code, view(ss))
}
