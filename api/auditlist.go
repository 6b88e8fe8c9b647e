package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/store"
)

// auditPage is a page of the org's audit log, newest first.
type auditPage struct {
	Events []store.AuditEvent `json:"events"`
	// NextBefore, set when the page is full, is ?before= for the next
	// (older) page.
	NextBefore string `json:"next_before,omitempty"`
}

var auditQuery = []queryParam{
	{"limit", "integer", "how many to return, newest first (1-200, default 50)"},
	{"before", "string", "an event ID (next_before of the previous page): the events after it in the list, older"},
	{"token_id", "string", "only the calls made with this API token"},
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
	page := auditPage{Events: evs}
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
		Action: c.QueryParam("action"), ObjectID: c.QueryParam("object_id")}
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
		if r.method != http.MethodGet {
			out = append(out, r.doc.id)
		}
	}
	slices.Sort(out)
	return out
}

func auditSchemas() map[string]any {
	return map[string]any{
		"AuditEvent": object(props{
			"id": str, "at": described(dateTime, "when the call was answered"),
			"token_id":   described(str, "the API token that made the call (a revoked one, when that is why it was refused)"),
			"token_name": str, "via": described(str, "bearer (Authorization header) or session (the dashboard's cookie)"),
			"method": str, "route": described(str, "the route's pattern, e.g. /v1/installs/{id}"),
			"action": described(str, "the route's operationId"),
			"objects": described(map[string]any{"type": "object", "additionalProperties": str},
				"the objects the call named in its path or made, by kind: app_id, install_id, operation_id, step, step_id, "+
					"token_id, token_name…; new_<kind> when it made one of a kind its path named"),
			"status":      described(integer, "the answer's HTTP status (499: the client went away first)"),
			"error_code":  described(str, "a failure's error code (the Error's code)"),
			"duration_ms": integer,
		}, "id", "at", "token_id", "token_name", "via", "method", "route", "action", "objects", "status", "duration_ms"),
		"AuditEventList": object(props{"events": arrayOf(ref("AuditEvent")),
			"next_before": described(str, "set when the page is full: pass as ?before= for the next, older, page")}, "events"),
	}
}
