package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/store"
)

// codeFourEyes refuses the approval of a plan by the user who started its
// operation, in an app that requires four eyes.
const codeFourEyes = "four_eyes"

// principalCtxKey holds the request's principal in its context, for code
// that has only the context (beginOperation).
type principalCtxKey struct{}

// startedBy is who the request ctx belongs to: its user's name (a token's
// made before users) and ID ("" for such a token, or outside a request).
func startedBy(ctx context.Context) (name, userID string) {
	p, _ := ctx.Value(principalCtxKey{}).(principal)
	return p.name(), p.user.ID
}

// checkFourEyes refuses an approval by the user who started op when op's
// app requires four eyes (a denial is always allowed: it stops a change).
func (s *Server) checkFourEyes(c echo.Context, op store.InstallOperation, approve bool) error {
	p := caller(c)
	if !approve || op.StartedByUser == "" || op.StartedByUser != p.user.ID {
		return nil
	}
	ctx := c.Request().Context()
	inst, err := s.store.GetInstall(ctx, op.OrgID, op.InstallID)
	if err != nil {
		return err
	}
	app, err := s.store.GetApp(ctx, op.OrgID, inst.AppID)
	if err != nil {
		return err
	}
	if app.FourEyes {
		return apierr.New(http.StatusForbidden, codeFourEyes, "",
			"app %s requires four eyes: you started this operation, so another user must approve its plans", app.Name)
	}
	return nil
}
