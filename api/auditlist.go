package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/store"
)

var auditQuery = []queryParam{
	{"limit", "integer", "how many to return, newest first (1-200, default 50)"},
	{"before", "string", "an event ID (next_before of the previous page): the events after it in the list, older"},
	{"token_id", "string", "only the calls made with this API token"},
	{"user", "string", "only the calls made by this user (its ID or name), with its tokens or its dashboard session"},
	{"action", "string", "only the calls of this operation (an operationId of this document: createApp, approveStep…)"},
	{"object_id", "string", "only the calls that named or made this object (an ID, a step or a component name)"},
	{"since", "string", "only the calls answered at or after this time (RFC 3339)"},
}

func (s *Server) listAudit(c echo.Context) error {
	f, err := s.auditFilter(c)
	if err != nil {
		return err
	}
	evs, err := s.store.ListAuditEvents(c.Request().Context(), orgID(c), f)
	if err != nil {
		return err
	}
	page := wire.AuditEventList{Events: views(evs, auditEventView)}
	if len(evs) == f.Limit {
		page.NextBefore = evs[len(evs)-1].ID
	}
	return c.JSON(http.StatusOK, page)
}

// auditFilter reads GET /v1/audit's query.
func (s *Server) auditFilter(c echo.Context) (store.AuditFilter, error) {
	limit, err := queryInt(c, "limit", store.DefaultAuditLimit, 1, store.MaxAuditLimit)
	if err != nil {
		return store.AuditFilter{}, err
	}
	f := store.AuditFilter{Limit: limit, Before: c.QueryParam("before"), TokenID: c.QueryParam("token_id"),
		User: c.QueryParam("user"), Action: c.QueryParam("action"), ObjectID: c.QueryParam("object_id")}
	if v := c.QueryParam("since"); v != "" {
		if f.Since, err = time.Parse(time.RFC3339, v); err != nil {
			return f, apierr.Invalid("since", "%q is not a time: want RFC 3339, e.g. 2026-05-01T12:00:00Z", v)
		}
	}
	if actions := s.auditedActions(); f.Action != "" && !slices.Contains(actions, f.Action) {
		return f, apierr.Invalid("action", "%q is not an audited action; they are: %s", f.Action, strings.Join(actions, ", "))
	}
	return f, nil
}

// auditedActions are the operation ids of the audited routes, sorted.
func (s *Server) auditedActions() []string {
	var out []string
	for _, r := range s.routes {
		if r.method != http.MethodGet || r.doc.audited {
			out = append(out, r.doc.id)
		}
	}
	slices.Sort(out)
	return out
}

func auditEventView(e store.AuditEvent) wire.AuditEvent {
	return wire.AuditEvent{ID: e.ID, At: e.CreatedAt, TokenID: e.TokenID, TokenName: e.TokenName, UserID: e.UserID,
		UserName: e.UserName, Via: e.Via, Method: e.Method,
		Route: e.Route, Action: e.Action, Objects: e.Objects, Status: e.Status, ErrorCode: e.ErrorCode, DurationMS: e.DurationMS}
}
