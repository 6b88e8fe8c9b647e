package gateway

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// MaxStateBytes bounds one terraform state a job may write.
const MaxStateBytes = 64 << 20

func stateAccessFrom(c echo.Context) store.StateAccess {
	return c.Get("stateAccess").(store.StateAccess)
}

// authenticateState checks the job's state credential and that the request
// is about the job's workspace.
func (g *Gateway) authenticateState(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		jobID, token, ok := c.Request().BasicAuth()
		if !ok || jobID == "" || token == "" {
			return stateUnauthorized(c, "the state backend takes HTTP basic auth: the job ID and the job's state credential")
		}
		a, err := g.store.AuthenticateState(c.Request().Context(), jobID, token)
		if errors.Is(err, store.ErrUnauthorized) && !errors.Is(err, store.ErrStateCredentialEnded) {
			// a guess; an ended credential was right
			att := g.cfg.AuthLimiter.Begin(c.Request(), store.StateTokenPrefix, token)
			if refused := att.Failed(c.Response().Header()); refused != nil {
				return refused
			}
		}
		switch {
		case errors.Is(err, store.ErrStateCredentialEnded):
			return stateUnauthorized(c, fmt.Sprintf("job %s is not running: its state credential is valid only while it runs", jobID))
		case errors.Is(err, store.ErrUnauthorized):
			return stateUnauthorized(c, "invalid job ID or state credential")
		case err != nil:
			return err
		}
		if ws := c.Param("workspace"); ws != a.Workspace {
			return apierr.New(http.StatusForbidden, "forbidden", "workspace",
				"the state credential of job %s is not valid for workspace %q", jobID, ws)
		}
		c.Set("stateAccess", a)
		return next(c)
	}
}

func stateUnauthorized(c echo.Context, msg string) error {
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Basic realm="outpost terraform state"`)
	return apierr.New(http.StatusUnauthorized, protocol.CodeUnauthorized, "", "%s", msg)
}

// stateError answers a store error the way terraform's http backend reads
// it: a lock in the way is 423 with the holder's lock info; an attempt that
// ended is 401; the rest as everywhere else.
func stateError(c echo.Context, err error) error {
	var locked *store.StateLockError
	switch {
	case errors.As(err, &locked):
		return c.Blob(http.StatusLocked, echo.MIMEApplicationJSON, []byte(locked.Holder.Info))
	case errors.Is(err, store.ErrStateLocked):
		return apierr.New(http.StatusLocked, protocol.CodeConflict, "", "the workspace is locked")
	case errors.Is(err, store.ErrUnauthorized):
		return stateUnauthorized(c, "the job's attempt is no longer running: its state credential is no longer valid")
	}
	return err
}

// readBody reads the request body; one over the route's limit is a 413
// that says what (tooLarge, of limit).
func readBody(c echo.Context, tooLarge string, limit int64) ([]byte, error) {
	body, err := io.ReadAll(c.Request().Body)
	var maxBytes *http.MaxBytesError
	if errors.Is(err, echo.ErrStatusRequestEntityTooLarge) || errors.As(err, &maxBytes) {
		return nil, apierr.New(http.StatusRequestEntityTooLarge, protocol.CodeTooLarge, "", tooLarge, limit)
	}
	if err != nil {
		return nil, apierr.Invalid("", "reading the body: %v", err)
	}
	return body, nil
}

func (g *Gateway) getState(c echo.Context) error {
	a := stateAccessFrom(c)
	v, err := g.store.GetTerraformState(c.Request().Context(), a.OrgID, a.Workspace)
	if errors.Is(err, store.ErrNotFound) {
		return c.NoContent(http.StatusNoContent) // terraform: no state yet
	}
	if err != nil {
		return err
	}
	sum := md5.Sum([]byte(v.State))
	c.Response().Header().Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, []byte(v.State))
}

func (g *Gateway) putState(c echo.Context) error {
	a := stateAccessFrom(c)
	body, err := readBody(c, "a state holds at most %d bytes", MaxStateBytes)
	if err != nil {
		return err
	}
	if want := c.Request().Header.Get("Content-MD5"); want != "" {
		sum := md5.Sum(body)
		if base64.StdEncoding.EncodeToString(sum[:]) != want {
			return apierr.Invalid("Content-MD5", "does not match the body: the state was damaged on the way")
		}
	}
	v, created, err := g.store.PutTerraformState(c.Request().Context(), a, c.QueryParam("ID"), body)
	if err != nil {
		return stateError(c, err)
	}
	return c.JSON(http.StatusOK, stateStored{Version: v.Version, Created: created})
}

// stateStored answers a state write: the version it stored, and whether
// the write made one (false: the same state again).
type stateStored struct {
	Version int  `json:"version"`
	Created bool `json:"created"`
}

func (g *Gateway) deleteState(c echo.Context) error {
	a := stateAccessFrom(c)
	if err := g.store.DeleteTerraformStateAs(c.Request().Context(), a, c.QueryParam("ID")); err != nil {
		return stateError(c, err)
	}
	return c.NoContent(http.StatusOK)
}

func (g *Gateway) lockState(c echo.Context) error {
	a := stateAccessFrom(c)
	info, err := readBody(c, "the lock info holds at most %d bytes", MaxBodyBytes)
	if err != nil {
		return err
	}
	lock, err := g.store.LockTerraformState(c.Request().Context(), a, info)
	if err != nil {
		return stateError(c, err)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, []byte(lock.Info))
}

// unlockState takes the lock ID from the lock info terraform sends, or from
// ?ID=.
func (g *Gateway) unlockState(c echo.Context) error {
	a := stateAccessFrom(c)
	body, err := readBody(c, "the lock info holds at most %d bytes", MaxBodyBytes)
	if err != nil {
		return err
	}
	id := c.QueryParam("ID")
	if b := bytes.TrimSpace(body); len(b) > 0 && string(b) != "null" {
		var info struct {
			ID string `json:"ID"`
		}
		if err := json.Unmarshal(b, &info); err != nil {
			return apierr.Invalid("", "the body must be terraform's lock info (JSON): %v", err)
		}
		if id != "" && info.ID != "" && id != info.ID {
			return apierr.Invalid("ID", "?ID=%s and the lock info's ID %s differ", id, info.ID)
		}
		if info.ID != "" {
			id = info.ID
		}
	}
	if strings.TrimSpace(id) == "" {
		return apierr.Invalid("ID", "the lock ID is required (the lock info's ID, or ?ID=)")
	}
	if err := g.store.UnlockTerraformState(c.Request().Context(), a, id); err != nil {
		return stateError(c, err)
	}
	return c.NoContent(http.StatusOK)
}
