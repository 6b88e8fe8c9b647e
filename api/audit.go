package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// The audit log (docs/architecture/api.md, "Audit"): every changing /v1 call is
// recorded once answered, refused ones too, under the org of the API token
// it carried (a revoked one included). A call with no API token of any org
// is not recorded: there is no org to show it to. Request bodies never are.

// auditWriteTimeout bounds the write of an audit event; it does not end
// when the client goes away.
const auditWriteTimeout = 5 * time.Second

// statusClientGone is recorded for a call whose client went away before
// the answer (nginx's 499): the change may or may not have been made.
const statusClientGone = 499

// maxObjectLen bounds an object ID taken from the path as recorded.
const maxObjectLen = 200

// errPanicked stands for a handler that panicked (answered 500).
var errPanicked = errors.New("the handler panicked")

// auditNote is what a call's handler adds to its audit event: the objects
// it made, the code of an error it answered itself.
type auditNote struct {
	mu        sync.Mutex
	objects   map[string]string
	errorCode string
}

type auditNoteKey struct{}

// noteObject adds an object the call made (kind: app_id, operation_id…) to
// its audit event; under new_<kind> when the path named one of that kind.
func noteObject(ctx context.Context, kind, id string) {
	n, ok := ctx.Value(auditNoteKey{}).(*auditNote)
	if !ok || id == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, taken := n.objects[kind]; taken {
		kind = "new_" + kind
	}
	n.objects[kind] = id
}

// noteErrorCode is the error code of a failure the handler answered itself
// (not by returning an error).
func noteErrorCode(ctx context.Context, code string) {
	if n, ok := ctx.Value(auditNoteKey{}).(*auditNote); ok {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.errorCode = code
	}
}

// pathObject is a route parameter as an audit event's object.
type pathObject struct{ param, kind string }

// paramKinds are the objects of the parameters other than :id, whose kind is
// the segment before it, singular (apps/:id is an app_id).
var paramKinds = map[string]string{"cmd": "command_id", "op": "operation_id", "rid": "release_id",
	"build_id": "build_id", "step": "step", "name": "component", "version": "config_version", "uid": "runner_update_id",
	"bundle": "support_bundle_id", "action": "action", "run": "action_run_id", "runbook": "runbook",
	"runbook_run": "runbook_run_id"}

func pathObjects(path string) []pathObject {
	segs := strings.Split(path, "/")
	var out []pathObject
	for i, seg := range segs {
		param, ok := strings.CutPrefix(seg, ":")
		if !ok {
			continue
		}
		kind, known := paramKinds[param]
		switch {
		case param == "id":
			kind = strings.TrimSuffix(segs[i-1], "s") + "_id"
		case !known:
			kind = param
		}
		out = append(out, pathObject{param, kind})
	}
	return out
}

// audited records route r's calls in the audit log once answered.
func (s *Server) audited(r route) echo.MiddlewareFunc {
	objects := pathObjects(r.path)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			note := &auditNote{objects: map[string]string{}}
			for _, o := range objects {
				note.objects[o.kind] = truncate(c.Param(o.param), maxObjectLen)
			}
			req := c.Request()
			c.SetRequest(req.WithContext(context.WithValue(req.Context(), auditNoteKey{}, note)))
			defer func() {
				if p := recover(); p != nil {
					s.recordAudit(c, r, note, errPanicked, time.Since(start))
					panic(p)
				}
			}()
			err := next(c)
			s.recordAudit(c, r, note, err, time.Since(start))
			return err
		}
	}
}

// recordAudit writes the call's audit event. A failure to write it is
// logged (with the event) and the answer stands: the change was made or
// refused already, and a failed answer would say otherwise.
func (s *Server) recordAudit(c echo.Context, r route, note *auditNote, err error, took time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), auditWriteTimeout)
	defer cancel()
	note.mu.Lock()
	defer note.mu.Unlock()
	status, code := outcome(c, err, note.errorCode)
	if _, authed := c.Get(principalKey).(principal); !authed && code == protocol.CodeRateLimited {
		return // refused before any token was checked: a guesser cannot flood the log
	}
	p, ok := s.auditCaller(ctx, c)
	if !ok {
		return
	}
	tok := p.token
	ev := store.AuditEvent{OrgID: p.orgID, TokenID: tok.ID, TokenName: tok.Name, UserID: p.user.ID, UserName: p.user.Name,
		Via: p.via, Method: r.method,
		Route: "/v1" + openAPIPath(r.path), Action: r.doc.id, Objects: note.objects, Status: status, ErrorCode: code,
		DurationMS: took.Milliseconds()}
	if _, werr := s.store.RecordAuditEvent(ctx, ev); werr != nil {
		s.log.Error("audit event not recorded (the call was answered)", "org", ev.OrgID, "token_id", ev.TokenID,
			"method", ev.Method, "route", ev.Route, "action", ev.Action, "objects", ev.Objects, "status", ev.Status,
			"error_code", ev.ErrorCode, "err", werr)
	}
}

// auditCaller is who a call came from: the principal it was authenticated
// as, else (a refused call) the owner of the API token or session it sent,
// revoked or not; false when it sent no credential of any org.
func (s *Server) auditCaller(ctx context.Context, c echo.Context) (principal, bool) {
	if p, ok := c.Get(principalKey).(principal); ok {
		return p, true
	}
	plain, via := credential(c.Request())
	p, err := s.lookupCredential(ctx, plain, via)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Error("audit: the credential of a refused call could not be looked up; not recorded", "route", c.Path(), "err", err)
		}
		return principal{}, false
	}
	return p, true
}

// lookupCredential finds whose a credential is, valid or not.
func (s *Server) lookupCredential(ctx context.Context, plain, via string) (principal, error) {
	p := principal{via: via}
	var userID string
	switch {
	case via == store.ViaSession && strings.HasPrefix(plain, store.SessionPrefix):
		ses, err := s.store.LookupSession(ctx, plain)
		if err != nil {
			return p, err
		}
		p.orgID, userID = ses.OrgID, ses.UserID
	case strings.HasPrefix(plain, protocol.APITokenPrefix):
		tok, err := s.store.LookupAPIToken(ctx, plain)
		if err != nil {
			return p, err
		}
		p.orgID, p.token, userID = tok.OrgID, tok, tok.UserID
	default:
		return p, store.ErrNotFound
	}
	if userID != "" {
		u, err := s.store.GetUser(ctx, p.orgID, userID)
		if err != nil {
			return p, err
		}
		p.user = u
	}
	return p, nil
}

// outcome is the status a call was answered (or is about to be answered by
// apierr.Handler) and, for a failure, its error code.
func outcome(c echo.Context, err error, noted string) (int, string) {
	res := c.Response()
	switch {
	case err == nil && res.Status >= http.StatusBadRequest:
		return res.Status, noted
	case err == nil:
		return res.Status, ""
	case errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil:
		return statusClientGone, "client_gone"
	}
	he := apierr.Resolve(err)
	if res.Committed {
		return res.Status, he.Body.Code
	}
	return he.Status, he.Body.Code
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") // not half a character
}
