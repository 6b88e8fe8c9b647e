package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/maintenance"
	"github.com/outpost-dev/outpost/store"
)

type inputRequest struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Sensitive bool   `json:"sensitive"`
}

type createInstallRequest struct {
	AppID  string            `json:"app_id"`
	Name   string            `json:"name"`
	Inputs []inputRequest    `json:"inputs"`
	Labels map[string]string `json:"labels"`
}

// installView is an install as the API shows it: sensitive input values are
// left out.
type installView struct {
	ID     string         `json:"id"`
	OrgID  string         `json:"org_id"`
	AppID  string         `json:"app_id"`
	Name   string         `json:"name"`
	Status status.Install `json:"status"`
	Inputs []inputView    `json:"inputs"`
	// InputsVersion counts the accepted changes of the inputs.
	InputsVersion int `json:"inputs_version"`
	// ConfigVersion is the app config version the install runs.
	ConfigVersion int `json:"config_version"`
	// Labels select the install in a release.
	Labels map[string]string `json:"labels"`
	// MaintenanceWindows are when platform-started work may run.
	MaintenanceWindows []maintenance.Window `json:"maintenance_windows"`
	// DriftEvery and DriftReconcile are the install's drift schedule.
	DriftEvery     string `json:"drift_every"`
	DriftReconcile bool   `json:"drift_reconcile"`
	// ApprovalMode: plans apply at once (approve-all) or wait (prompt).
	ApprovalMode status.Approval `json:"approval_mode"`
	Runner       *runnerRef      `json:"runner,omitempty"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
}

type inputView struct {
	Name      string  `json:"name"`
	Value     *string `json:"value,omitempty"` // nil when sensitive
	Sensitive bool    `json:"sensitive"`
}

// runnerRef names an install's runner; RegistrationToken is set only in the
// answer that creates the install.
type runnerRef struct {
	ID                string `json:"id"`
	RegistrationToken string `json:"registration_token,omitempty"`
}

func newInstallView(inst store.Install, runner *runnerRef) installView {
	v := installView{ID: inst.ID, OrgID: inst.OrgID, AppID: inst.AppID, Name: inst.Name, Status: inst.Status,
		Inputs: make([]inputView, len(inst.Inputs)), InputsVersion: inst.InputsVersion, ConfigVersion: inst.ConfigVersion, Labels: inst.Labels,
		MaintenanceWindows: inst.MaintenanceWindows, DriftEvery: inst.DriftEvery, DriftReconcile: inst.DriftReconcile, ApprovalMode: inst.ApprovalMode, Runner: runner, CreatedAt: inst.CreatedAt, UpdatedAt: inst.UpdatedAt}
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	if v.MaintenanceWindows == nil {
		v.MaintenanceWindows = []maintenance.Window{}
	}
	for i, in := range inst.Inputs {
		v.Inputs[i] = inputView{Name: in.Name, Sensitive: in.Sensitive}
		if !in.Sensitive {
			v.Inputs[i].Value = &in.Value
		}
	}
	return v
}

func (s *Server) createInstall(c echo.Context) error {
	var req createInstallRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	if req.AppID == "" {
		return apierr.Invalid("app_id", "is required")
	}
	if err := checkLabels("labels", req.Labels); err != nil {
		return err
	}
	inputs := make([]store.InstallInput, len(req.Inputs))
	for i, in := range req.Inputs {
		inputs[i] = store.InstallInput{Name: in.Name, Value: in.Value, Sensitive: in.Sensitive}
	}
	inst, runner, regToken, err := s.store.CreateInstall(c.Request().Context(), orgID(c), req.AppID, req.Name, inputs)
	if err != nil {
		return onField(err, "name")
	}
	noteObject(c.Request().Context(), "install_id", inst.ID)
	noteObject(c.Request().Context(), "runner_id", runner.ID)
	if len(req.Labels) > 0 {
		if inst, err = s.store.SetInstallLabels(c.Request().Context(), inst.OrgID, inst.ID, req.Labels); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusCreated, newInstallView(inst, &runnerRef{ID: runner.ID, RegistrationToken: regToken}))
}

func (s *Server) listInstalls(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	insts, err := s.store.ListInstalls(ctx, org, c.QueryParam("app_id"))
	if err != nil {
		return err
	}
	runners, err := s.store.ListRunners(ctx, org)
	if err != nil {
		return err
	}
	runnerOf := map[string]*runnerRef{}
	for _, r := range runners {
		if r.InstallID != nil {
			runnerOf[*r.InstallID] = &runnerRef{ID: r.ID}
		}
	}
	sums, err := s.store.InstallSummaries(ctx, org)
	if err != nil {
		return err
	}
	out := make([]installListItem, len(insts))
	for i, inst := range insts {
		out[i] = newInstallListItem(newInstallView(inst, runnerOf[inst.ID]), sums[inst.ID])
	}
	return c.JSON(http.StatusOK, map[string]any{"installs": out})
}

func (s *Server) getInstall(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	inst, err := s.store.GetInstall(ctx, org, c.Param("id"))
	if err != nil {
		return err
	}
	var ref *runnerRef
	switch r, err := s.store.GetInstallRunner(ctx, org, inst.ID); {
	case err == nil:
		ref = &runnerRef{ID: r.ID}
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	return c.JSON(http.StatusOK, newInstallView(inst, ref))
}

func (s *Server) deleteInstall(c echo.Context) error {
	return deleteByID(c, s.deleteInstallAndSchedule)
}

// installListItem is an install as the list shows it: with its newest
// operation and its drifted parts, so a dashboard needs no call per install.
type installListItem struct {
	installView
	LastOperation *lastOperationView `json:"last_operation"`
	Drifted       []string           `json:"drifted"`
}

type lastOperationView struct {
	ID              string     `json:"id"`
	Kind            string     `json:"kind"`
	Status          status.Op  `json:"status"`
	Error           string     `json:"error,omitempty"`
	WaitingApproval bool       `json:"waiting_approval"`
	CreatedAt       time.Time  `json:"created_at"`
	FinishedAt      *time.Time `json:"finished_at"`
}

func newInstallListItem(v installView, sum store.InstallSummary) installListItem {
	item := installListItem{installView: v, Drifted: sum.Drifted}
	if item.Drifted == nil {
		item.Drifted = []string{}
	}
	if op := sum.LastOperation; op != nil {
		item.LastOperation = &lastOperationView{ID: op.ID, Kind: op.Kind, Status: op.Status, Error: op.Error,
			WaitingApproval: sum.WaitingApproval, CreatedAt: op.CreatedAt, FinishedAt: op.FinishedAt}
	}
	return item
}
