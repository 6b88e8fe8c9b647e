package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/store"
)

func (s *Server) createApp(c echo.Context) error {
	var req wire.CreateAppRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	app, err := s.store.CreateApp(c.Request().Context(), orgID(c), req.Name, req.Description)
	if err != nil {
		return onField(err, "name")
	}
	noteObject(c.Request().Context(), "app_id", app.ID)
	return c.JSON(http.StatusCreated, appView(app))
}

func (s *Server) listApps(c echo.Context) error {
	return listOfOrg(c, s.store.ListApps, func(apps []store.App) wire.AppList { return wire.AppList{Apps: views(apps, appView)} })
}

func (s *Server) getApp(c echo.Context) error { return getByID(c, s.store.GetApp, appView) }

func (s *Server) deleteApp(c echo.Context) error { return deleteByID(c, s.store.DeleteApp) }

func (s *Server) createComponent(c echo.Context) error {
	var req wire.CreateComponentRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	cmp, err := s.store.CreateComponent(c.Request().Context(), orgID(c), store.Component{
		AppID: c.Param("id"), Name: req.Name, Type: req.Type, Dependencies: req.Dependencies, Config: store.JSONMap(req.Config)})
	if err != nil {
		return onField(err, "name")
	}
	noteObject(c.Request().Context(), "component_id", cmp.ID)
	return c.JSON(http.StatusCreated, componentView(cmp))
}

func (s *Server) listComponents(c echo.Context) error {
	cmps, err := s.store.ListComponents(c.Request().Context(), orgID(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ComponentList{Components: views(cmps, componentView)})
}

func (s *Server) getComponent(c echo.Context) error {
	return getByID(c, s.store.GetComponent, componentView)
}

func (s *Server) deleteComponent(c echo.Context) error { return deleteByID(c, s.store.DeleteComponent) }

func appView(a store.App) wire.App {
	return wire.App{ID: a.ID, OrgID: a.OrgID, Name: a.Name, Description: a.Description, FourEyes: a.FourEyes,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

func componentView(c store.Component) wire.Component {
	return wire.Component{ID: c.ID, OrgID: c.OrgID, AppID: c.AppID, Name: c.Name, Type: c.Type,
		Dependencies: nonNil(c.Dependencies), Config: c.Config, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// setFourEyes turns the app's four-eyes rule on or off.
func (s *Server) setFourEyes(c echo.Context) error {
	var req wire.FourEyes
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	app, err := s.store.SetFourEyes(c.Request().Context(), orgID(c), c.Param("id"), req.FourEyes)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, appView(app))
}
