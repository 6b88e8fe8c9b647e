package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/maintenance"
)

type windowsRequest struct {
	Windows []maintenance.Window `json:"windows"`
}

// windowsView is an install's maintenance windows and the one open now or
// next (nil without windows).
type windowsView struct {
	Windows []maintenance.Window `json:"windows"`
	Next    *nextWindow          `json:"next"`
}

type nextWindow struct {
	Open  bool      `json:"open"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

func newWindowsView(ws []maintenance.Window, now time.Time) windowsView {
	v := windowsView{Windows: ws}
	if v.Windows == nil {
		v.Windows = []maintenance.Window{}
	}
	if slot, ok := maintenance.Next(ws, now); ok {
		v.Next = &nextWindow{Open: !now.Before(slot.Start), Start: slot.Start.UTC(), End: slot.End.UTC()}
	}
	return v
}

func (s *Server) getMaintenanceWindows(c echo.Context) error {
	inst, err := s.store.GetInstall(c.Request().Context(), orgID(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newWindowsView(inst.MaintenanceWindows, time.Now()))
}

// putMaintenanceWindows replaces the install's windows; a window that
// cannot work is a 400 naming its field (windows[i].time_zone, …).
func (s *Server) putMaintenanceWindows(c echo.Context) error {
	var req windowsRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	ctx, org := c.Request().Context(), orgID(c)
	if err := s.store.SetMaintenanceWindows(ctx, org, c.Param("id"), req.Windows); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newWindowsView(req.Windows, time.Now()))
}

// windowOption is what an operation request says about maintenance windows.
const windowOption = "wait for the install's next maintenance window before running (at once when one is open or the " +
	"install has none); meanwhile the operation is waiting_for_maintenance_window until waiting_until, and holds the " +
	"install (cancel it to run another). Left out: run at once"

// maintenanceSchemas are the OpenAPI schemas of maintenance windows.
func maintenanceSchemas() map[string]any {
	window := object(props{
		"days":      described(arrayOf(str), "mon, tue, wed, thu, fri, sat, sun"),
		"start":     described(str, "local time of day HH:MM in time_zone; on a day the clock skips it, the window opens when the clock jumps past it; on one it reads it twice, at the first"),
		"duration":  described(str, "elapsed time (a Go duration: 30m, 4h, 1h30m), more than 0 and at most 168h"),
		"time_zone": described(str, "an IANA time zone, e.g. Europe/Berlin or UTC")},
		"days", "start", "duration", "time_zone")
	return map[string]any{
		"MaintenanceWindow": window,
		"MaintenanceWindowsRequest": request(props{"windows": described(arrayOf(ref("MaintenanceWindow")),
			"replaces the install's windows; empty: none (work may run at any time)")}, "windows"),
		"MaintenanceWindows": object(props{"windows": arrayOf(ref("MaintenanceWindow")),
			"next": nullable(described(object(props{"open": described(boolean, "a window is open now (start is in the past)"),
				"start": dateTime, "end": dateTime}, "open", "start", "end"), "the window open now, or the next to open; null without windows"))},
			"windows", "next"),
	}
}
