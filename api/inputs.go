package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// patchInputs validates a change of the install's inputs against the app's
// latest config, records it as the next inputs version, and, if asked,
// starts the update_inputs operation that applies it.
func (s *Server) patchInputs(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	inst, req, err := pathRequest[wire.UpdateInputsRequest](c, s.store.GetInstall)
	if err != nil {
		return err
	}
	if req.PlanOnly && !req.Apply {
		return apierr.Invalid("plan_only", "only applies with apply")
	}
	change, err := s.validInputsChange(ctx, inst, req)
	if err != nil {
		return err
	}
	var op *store.InstallOperation
	if req.Apply {
		begun, err := s.beginOperation(ctx, inst, store.InstallOperation{Kind: store.OpUpdateInputs, PlanOnly: req.PlanOnly})
		if err != nil {
			return err
		}
		op, change.Operation = &begun, begun.ID
	}
	v, err := s.store.UpdateInputs(ctx, org, inst.ID, change)
	if err != nil {
		if op != nil {
			s.abandonOperation(ctx, *op, "the inputs did not change")
		}
		return err
	}
	if op != nil {
		if err := s.launchOperation(ctx, *op); err != nil {
			return err
		}
	}
	if inst, err = s.store.GetInstall(ctx, org, inst.ID); err != nil {
		return err
	}
	answer := wire.UpdatedInputs{InstallID: inst.ID, InputsVersion: inst.InputsVersion, Inputs: views(inst.Inputs, inputView)}
	if v != nil {
		answer.Version = ptr(inputVersionView(*v))
	}
	if op != nil {
		answer.Operation = ptr(operationView(*op))
	}
	return c.JSON(http.StatusOK, answer)
}

// validInputsChange checks a change against the inputs the app's latest
// config declares: a 422 names the input of a value of the wrong type, an
// undeclared input, or a required one removed.
func (s *Server) validInputsChange(ctx context.Context, inst store.Install, req wire.UpdateInputsRequest) (store.InputsChange, error) {
	ch := store.InputsChange{Remove: req.Remove, Version: inst.InputsVersion}
	if err := checkInputNames(req); err != nil {
		return ch, err
	}
	ac, err := s.store.LatestAppConfig(ctx, inst.OrgID, inst.AppID)
	if errors.Is(err, store.ErrNotFound) {
		return ch, errNoConfig(inst.AppID)
	}
	if err != nil {
		return ch, err
	}
	cfg, err := loadConfig(ac)
	if err != nil {
		return ch, err
	}
	declared := map[string]appconfig.Input{}
	for _, in := range cfg.Inputs {
		declared[in.Name] = in
	}
	for i, in := range req.Set {
		d, ok := declared[in.Name]
		if !ok {
			return ch, undeclaredInput(fmt.Sprintf("set[%d].name", i), in.Name, ac.Version, cfg)
		}
		if _, err := appconfig.ParseInput(d.Type, in.Value); err != nil {
			return ch, badInputValue(fmt.Sprintf("set[%d].value", i), d, in.Sensitive, err)
		}
		ch.Set = append(ch.Set, store.InstallInput{Name: in.Name, Value: in.Value, Sensitive: in.Sensitive || d.Sensitive})
	}
	for i, name := range req.Remove {
		d, ok := declared[name]
		switch {
		case !ok:
			return ch, undeclaredInput(fmt.Sprintf("remove[%d]", i), name, ac.Version, cfg)
		case d.Required:
			return ch, unprocessable(fmt.Sprintf("remove[%d]", i), "input %q is required: it cannot be removed (set a new value instead)", name)
		}
	}
	return ch, nil
}

// checkInputNames refuses a change that names no input, or one twice.
func checkInputNames(req wire.UpdateInputsRequest) error {
	seen := map[string]bool{}
	for i, in := range req.Set {
		field := fmt.Sprintf("set[%d].name", i)
		switch {
		case in.Name == "":
			return apierr.Invalid(field, "is required")
		case seen[in.Name]:
			return apierr.Invalid(field, "%q is given twice", in.Name)
		}
		seen[in.Name] = true
	}
	for i, name := range req.Remove {
		if seen[name] || name == "" {
			return apierr.Invalid(fmt.Sprintf("remove[%d]", i), "%q is empty, or set or removed twice", name)
		}
		seen[name] = true
	}
	return nil
}

func unprocessable(field, format string, args ...any) error {
	return apierr.New(http.StatusUnprocessableEntity, protocol.CodeInvalid, field, format, args...)
}

func undeclaredInput(field, name string, version int, cfg *appconfig.Config) error {
	return unprocessable(field, "input %q is not declared by the app's config (version %d), which declares %s",
		name, version, quoted(cfg.InputNames()))
}

// badInputValue names the input whose value does not parse; a sensitive
// value is never echoed.
func badInputValue(field string, d appconfig.Input, sensitive bool, err error) error {
	if sensitive || d.Sensitive {
		return unprocessable(field, "input %q (%s): the value is not a valid %s", d.Name, d.Type, d.Type)
	}
	return unprocessable(field, "input %q (%s): %v", d.Name, d.Type, err)
}

func quoted(names []string) string {
	q := slices.Clone(names)
	for i, n := range q {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func (s *Server) listInputVersions(c echo.Context) error {
	versions, err := s.store.ListInputVersions(c.Request().Context(), orgID(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.InputVersionList{Versions: views(versions, inputVersionView)})
}

// inputVersionView shows an inputs version: the names it changed, never
// the values.
func inputVersionView(v store.InputVersion) wire.InputVersion {
	return wire.InputVersion{Version: v.Version, Set: nonNil(v.Set), Removed: nonNil(v.Removed), CreatedAt: v.CreatedAt}
}
