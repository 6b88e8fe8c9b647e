package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/store"
)

type createAppRequest struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func (s *Server) createApp(c echo.Context) error {
	var req createAppRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	app, err := s.store.CreateApp(c.Request().Context(), orgID(c), req.Name, req.Description)
	if err != nil {
		return onField(err, "name")
	}
	noteObject(c.Request().Context(), "app_id", app.ID)
	return c.JSON(http.StatusCreated, app)
}

func (s *Server) listApps(c echo.Context) error {
	apps, err := s.store.ListApps(c.Request().Context(), orgID(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"apps": apps})
}

func (s *Server) getApp(c echo.Context) error { return getByID(c, s.store.GetApp) }

func (s *Server) deleteApp(c echo.Context) error { return deleteByID(c, s.store.DeleteApp) }

type createComponentRequest struct {
	Name         string        `json:"name"`
	Type         string        `json:"type"`
	Dependencies []string      `json:"dependencies"`
	Config       store.JSONMap `json:"config"`
}

func (s *Server) createComponent(c echo.Context) error {
	var req createComponentRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	cmp, err := s.store.CreateComponent(c.Request().Context(), orgID(c), store.Component{
		AppID: c.Param("id"), Name: req.Name, Type: req.Type, Dependencies: req.Dependencies, Config: req.Config})
	if err != nil {
		return onField(err, "name")
	}
	noteObject(c.Request().Context(), "component_id", cmp.ID)
	return c.JSON(http.StatusCreated, cmp)
}

func (s *Server) listComponents(c echo.Context) error {
	cmps, err := s.store.ListComponents(c.Request().Context(), orgID(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"components": cmps})
}

func (s *Server) getComponent(c echo.Context) error { return getByID(c, s.store.GetComponent) }

func (s *Server) deleteComponent(c echo.Context) error { return deleteByID(c, s.store.DeleteComponent) }
