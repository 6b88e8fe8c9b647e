package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	digest "github.com/opencontainers/go-digest"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// The vendor's side of an offline deploy (docs/bundles.md, "Offline
// deploy"): the install file the air-gapped runner reads, and the import of
// the result it writes.

// maxOfflineResultBytes bounds an offline result (its steps' logs).
const maxOfflineResultBytes = 64 << 20

// maxStepName is the longest step name a step row holds.
const maxStepName = 200

// exportOfflineInstall answers the install file: who the install is, its
// labels and non-sensitive inputs; sensitive inputs by name only.
func (s *Server) exportOfflineInstall(c echo.Context) error {
	return answerByID(c, s.store.GetInstall, s.offlineInstall)
}

func (s *Server) offlineInstall(ctx context.Context, inst store.Install) (wire.OfflineInstall, error) {
	org := inst.OrgID
	app, err := s.store.GetApp(ctx, org, inst.AppID)
	if err != nil {
		return wire.OfflineInstall{}, err
	}
	declared, err := s.declaredSensitive(ctx, org, inst.AppID)
	if err != nil {
		return wire.OfflineInstall{}, err
	}
	f := wire.OfflineInstall{Format: protocol.OfflineInstallFormat, OrgID: org, AppID: app.ID, AppName: app.Name,
		InstallID: inst.ID, InstallName: inst.Name, Labels: inst.Labels, Inputs: map[string]string{},
		ExportedAt: time.Now().UTC()}
	for _, in := range inst.Inputs {
		if in.Sensitive || declared[in.Name] {
			f.SensitiveInputs = append(f.SensitiveInputs, in.Name)
			continue
		}
		f.Inputs[in.Name] = in.Value
	}
	for name, sensitive := range declared {
		if sensitive && !slices.Contains(f.SensitiveInputs, name) {
			f.SensitiveInputs = append(f.SensitiveInputs, name)
		}
	}
	slices.Sort(f.SensitiveInputs)
	return f, nil
}

// importOfflineResult records an offline deploy's result as a finished
// offline_deploy operation of the install (201), or answers the one the
// same result made before (200).
func (s *Server) importOfflineResult(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	inst, req, err := pathRequest[wire.OfflineResult](c, s.store.GetInstall)
	if err != nil {
		return err
	}
	r, err := offlineResult(req, inst)
	if err != nil {
		return err
	}
	if _, err := s.store.GetAppConfig(ctx, org, inst.AppID, r.ConfigVersion); errors.Is(err, store.ErrNotFound) {
		return s.unknownVersion(ctx, org, inst.AppID, r.ConfigVersion)
	} else if err != nil {
		return err
	}
	by, user := startedBy(ctx)
	op, created, err := s.store.ImportOfflineResult(ctx, store.OfflineImport{OrgID: org, InstallID: inst.ID, Result: r,
		StartedBy: by, StartedByUser: user})
	if err != nil {
		return err
	}
	noteObject(ctx, "operation_id", op.ID)
	if created {
		return c.JSON(http.StatusCreated, operationView(op))
	}
	return c.JSON(http.StatusOK, operationView(op))
}

// offlineResult is the request (the protocol's result) checked: a field
// missing or wrong is a 422 naming it.
func offlineResult(r wire.OfflineResult, inst store.Install) (protocol.OfflineResult, error) {
	if err := r.Check(); err != nil {
		field, msg, _ := strings.Cut(err.Error(), ": ")
		return r, unprocessable(field, "%s", msg)
	}
	switch {
	case r.InstallID != inst.ID:
		return r, unprocessable("install_id", "the result is of install %s, not of %s (%s): import it on its own install", r.InstallID, inst.Name, inst.ID)
	case r.AppID != "" && r.AppID != inst.AppID:
		return r, unprocessable("app_id", "the result is of app %s; install %s is of app %s", r.AppID, inst.Name, inst.AppID)
	case r.BundleIndex == "":
		return r, unprocessable("bundle_index", "missing: the digest of the bundle index deployed")
	case !isSHA256(r.BundleIndex):
		return r, unprocessable("bundle_index", "%q is not a sha256 digest (sha256:<64 hex digits>)", r.BundleIndex)
	case r.StartedAt.IsZero():
		return r, unprocessable("started_at", "missing")
	case r.FinishedAt.Before(r.StartedAt):
		return r, unprocessable("finished_at", "missing or before started_at")
	}
	return r, checkOfflineSteps(r.Steps)
}

// isSHA256 says whether s is a well-formed sha256 digest.
func isSHA256(s string) bool {
	d, err := digest.Parse(s)
	return err == nil && d.Algorithm() == digest.SHA256
}

// checkOfflineSteps refuses a step of an unknown kind, a name too long, or
// a name given twice.
func checkOfflineSteps(steps []protocol.OfflineStep) error {
	kinds := []string{protocol.OfflineStepSandbox, protocol.OfflineStepSync, protocol.OfflineStepComponent, protocol.OfflineStepHook}
	seen := map[string]bool{}
	for i, st := range steps {
		switch {
		case !slices.Contains(kinds, st.Kind):
			return unprocessable(fmt.Sprintf("steps[%d].kind", i), "%q, want one of %s", st.Kind, strings.Join(kinds, ", "))
		case len(st.Name) > maxStepName:
			return unprocessable(fmt.Sprintf("steps[%d].name", i), "longer than %d characters", maxStepName)
		case seen[st.Name]:
			return unprocessable(fmt.Sprintf("steps[%d].name", i), "%q is the name of an earlier step", st.Name)
		case st.Kind == protocol.OfflineStepComponent && st.Component == "":
			return unprocessable(fmt.Sprintf("steps[%d].component", i), "missing: a component step names its component")
		}
		seen[st.Name] = true
	}
	return nil
}
