package gateway

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/store"
)

// MaxBundleBytes caps a support bundle's archive (the route's body limit too).
const MaxBundleBytes = store.DefaultSupportBundleMaxBytes

// bundle takes a support job's archive from its running attempt (protocol.PathJobBundle).
func (g *Gateway) bundle(c echo.Context) error {
	// A bad attempt is told only about the runner's own job: another's is not found, as always.
	attempt, _ := strconv.Atoi(c.QueryParam("attempt"))
	body, err := readBody(c, "a support bundle holds at most %d bytes", MaxBundleBytes)
	if err != nil {
		return err
	}
	r := runnerFrom(c)
	g.markSeen(r.ID)
	err = g.store.PutSupportBundleArchive(c.Request().Context(), r.ID, c.Param("id"), attempt, body, MaxBundleBytes)
	switch {
	case errors.Is(err, store.ErrStaleAttempt) && attempt < 1:
		return apierr.Invalid("attempt", "must be 1 or more, in the query (?attempt=N)")
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, map[string]int{"bytes": len(body)})
}
