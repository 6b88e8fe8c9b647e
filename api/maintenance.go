package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/maintenance"
	"github.com/outpost-dev/outpost/store"
)

// windowsView shows an install's maintenance windows and the one open now
// or next (nil without windows).
func windowsView(ws []maintenance.Window, now time.Time) wire.MaintenanceWindows {
	v := wire.MaintenanceWindows{Windows: views(ws, windowView)}
	if slot, ok := maintenance.Next(ws, now); ok {
		v.Next = &wire.NextWindow{Open: !now.Before(slot.Start), Start: slot.Start.UTC(), End: slot.End.UTC()}
	}
	return v
}

func windowView(w maintenance.Window) wire.MaintenanceWindow {
	return wire.MaintenanceWindow{Days: nonNil(w.Days), Start: w.Start, Duration: w.Duration, TimeZone: w.TimeZone}
}

func (s *Server) getMaintenanceWindows(c echo.Context) error {
	return getByID(c, s.store.GetInstall, func(inst store.Install) wire.MaintenanceWindows {
		return windowsView(inst.MaintenanceWindows, time.Now())
	})
}

// putMaintenanceWindows replaces the install's windows; a window that
// cannot work is a 400 naming its field (windows[i].time_zone, …).
func (s *Server) putMaintenanceWindows(c echo.Context) error {
	var req wire.MaintenanceWindowsRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	ctx, org := c.Request().Context(), orgID(c)
	windows := make([]maintenance.Window, len(req.Windows))
	for i, w := range req.Windows {
		windows[i] = maintenance.Window{Days: w.Days, Start: w.Start, Duration: w.Duration, TimeZone: w.TimeZone}
	}
	if err := s.store.SetMaintenanceWindows(ctx, org, c.Param("id"), windows); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, windowsView(windows, time.Now()))
}
