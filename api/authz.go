package api

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/store"
)

// perm is what a route needs of its caller; every non-public route in the
// route table declares one (docs/architecture/api.md, "Users and roles").
type perm string

const (
	permRead    perm = "read"    // look
	permSelf    perm = "self"    // the caller's own things (its tokens, who it is): any user
	permOperate perm = "operate" // provision, deploy, releases, inputs, apps and installs
	permExec    perm = "exec"    // debug commands, support bundles, logs requests
	permApprove perm = "approve" // approve and deny plans
	permAdmin   perm = "admin"   // users, other users' tokens, settings
)

// rolePerms is what each role may do.
var rolePerms = map[string][]perm{
	store.RoleAdmin:    {permRead, permSelf, permOperate, permExec, permApprove, permAdmin},
	store.RoleOperator: {permRead, permSelf, permOperate, permExec},
	store.RoleApprover: {permRead, permSelf, permApprove},
	store.RoleViewer:   {permRead, permSelf},
}

// permScope is the token scope a permission needs (admin holds every scope,
// each scope holds read).
var permScope = map[perm]string{permRead: store.ScopeRead, permSelf: store.ScopeRead, permOperate: store.ScopeDeploy,
	permExec: store.ScopeExec, permApprove: store.ScopeApprove, permAdmin: store.ScopeAdmin}

const codeForbidden = "forbidden"

// principal is who a request's credential stands for.
type principal struct {
	orgID string
	user  store.User // ID "" for a token made before users: an admin
	token store.APIToken
	via   string // store.ViaBearer or store.ViaSession
}

// name names the principal: its user, else (a token made before users) the
// token.
func (p principal) name() string {
	if p.legacy() {
		return p.token.Name
	}
	return p.user.Name
}

// legacy: a token made before users, which acts as an org admin.
func (p principal) legacy() bool { return p.user.ID == "" }

// scoped says whether the credential's scopes allow need (a session has
// every scope its roles give).
func (p principal) scoped(need perm) bool {
	if p.via == store.ViaSession {
		return true
	}
	scopes := p.token.TokenScopes()
	return slices.Contains(scopes, store.ScopeAdmin) || slices.Contains(scopes, permScope[need]) ||
		(permScope[need] == store.ScopeRead && len(scopes) > 0)
}

// grants says whether the principal's roles give need in every app (""),
// or in app.
func (p principal) grants(need perm, app string) bool {
	if p.legacy() || (need == permSelf && len(p.user.Roles) > 0) {
		return true
	}
	for _, b := range p.user.Roles {
		if (b.AppID == "" || b.AppID == app) && slices.Contains(rolePerms[b.Role], need) {
			return true
		}
	}
	return false
}

// limited says whether some role giving need is limited to an app.
func (p principal) limited(need perm) bool {
	for _, b := range p.user.Roles {
		if b.AppID != "" && slices.Contains(rolePerms[b.Role], need) {
			return true
		}
	}
	return false
}

// isAdmin: the caller may act on other users' things.
func (p principal) isAdmin() bool { return p.scoped(permAdmin) && p.grants(permAdmin, "") }

// authorize refuses a request whose principal lacks route r's permission:
// 403 naming the permission, never anything of the object. A role limited to
// apps counts only on routes whose path names an object of one of them.
func (s *Server) authorize(r route) echo.MiddlewareFunc {
	need := r.doc.need
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p := c.Get(principalKey).(principal)
			if !p.scoped(need) {
				return forbidden("this API token's scopes (%s) do not include %s", p.token.Scopes, permScope[need])
			}
			if p.grants(need, "") {
				return next(c)
			}
			if p.limited(need) {
				app, err := s.appOf(c, r.path)
				if err != nil {
					return err
				}
				if app != "" && p.grants(need, app) {
					return next(c)
				}
			}
			return forbidden("your roles do not allow %s here", need)
		}
	}
}

func forbidden(format string, args ...any) error {
	return apierr.New(http.StatusForbidden, codeForbidden, "", format, args...)
}

// appOf is the app of the object route path names first (an app, install or
// component); "" when it names none, or one not found (a limited role then
// does not count: the answer is 403, as for an object of another app).
func (s *Server) appOf(c echo.Context, path string) (string, error) {
	ctx, org := c.Request().Context(), orgID(c)
	kind, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	id := c.Param("id")
	var app string
	var err error
	switch kind {
	case "apps":
		_, err = s.store.GetApp(ctx, org, id)
		app = id
	case "installs":
		var inst store.Install
		inst, err = s.store.GetInstall(ctx, org, id)
		app = inst.AppID
	case "components":
		var comp store.Component
		comp, err = s.store.GetComponent(ctx, org, id)
		app = comp.AppID
	}
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return app, err
}
