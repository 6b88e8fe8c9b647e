package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/store"
)

func (s *Server) createUser(c echo.Context) error {
	var req wire.CreateUserRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	u, err := s.store.CreateUser(c.Request().Context(), store.NewUser{OrgID: orgID(c), Name: req.Name, Email: req.Email,
		Kind: req.Kind, Password: req.Password, Roles: bindings(req.Roles)})
	if err != nil {
		return onField(err, "name")
	}
	noteObject(c.Request().Context(), "user_id", u.ID)
	return c.JSON(http.StatusCreated, userView(u))
}

func (s *Server) listUsers(c echo.Context) error {
	return listOfOrg(c, s.store.ListUsers, func(users []store.User) wire.UserList { return wire.UserList{Users: views(users, userView)} })
}

func (s *Server) getUser(c echo.Context) error { return getByID(c, s.store.GetUser, userView) }

func (s *Server) setUserRoles(c echo.Context) error {
	var req wire.SetRolesRequest
	if err := apierr.Bind(c, &req); err != nil {
		return err
	}
	u, err := s.store.SetUserRoles(c.Request().Context(), orgID(c), c.Param("id"), bindings(req.Roles))
	if err != nil {
		return err
	}
	s.principals.forget()
	return c.JSON(http.StatusOK, userView(u))
}

// disableUser disables a user: its sessions and tokens stop at once.
func (s *Server) disableUser(c echo.Context) error {
	if c.Param("id") == caller(c).user.ID {
		return apierr.Invalid("id", "you cannot disable yourself")
	}
	defer s.principals.forget()
	return deleteByID(c, s.store.DisableUser)
}

// getMe is who the request's credential stands for.
func (s *Server) getMe(c echo.Context) error {
	p := caller(c)
	org, err := s.store.GetOrg(c.Request().Context(), p.orgID)
	if err != nil {
		return err
	}
	me := wire.Me{Org: wire.Org{ID: org.ID, Name: org.Name, CreatedAt: org.CreatedAt}, TokenID: p.token.ID,
		Scopes: p.token.TokenScopes()}
	if !p.legacy() {
		u := userView(p.user)
		me.User = &u
	}
	return c.JSON(http.StatusOK, me)
}

func bindings(roles []wire.RoleBinding) []store.RoleBinding {
	out := make([]store.RoleBinding, len(roles))
	for i, r := range roles {
		out[i] = store.RoleBinding{Role: r.Role, AppID: r.AppID}
	}
	return out
}

// userView shows a user, never its password's hash.
func userView(u store.User) wire.User {
	roles := make([]wire.RoleBinding, len(u.Roles))
	for i, r := range u.Roles {
		roles[i] = wire.RoleBinding{Role: r.Role, AppID: r.AppID}
	}
	return wire.User{ID: u.ID, OrgID: u.OrgID, Name: u.Name, Email: u.Email, Kind: u.Kind, External: u.Subject != "", Roles: roles,
		CreatedAt: u.CreatedAt, DisabledAt: u.DisabledAt}
}
