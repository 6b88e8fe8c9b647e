package dashboard

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
)

// sessions serves /ui/session: POST signs in with a user's password, GET
// gives the signed-in page its CSRF token, DELETE signs out (revoking the
// session on the server).
type sessions struct {
	api Sessions
	log *slog.Logger
}

func (s *sessions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if site := r.Header.Get("Sec-Fetch-Site"); r.Method != http.MethodGet && site != "" && site != "same-origin" {
		writeError(w, http.StatusForbidden, "csrf_refused", "", "sign-in and sign-out come from the dashboard's own page")
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.signIn(w, r)
	case http.MethodGet:
		ck, err := r.Cookie(api.CSRFCookie)
		if _, serr := r.Cookie(api.SessionCookie); err != nil || serr != nil {
			writeError(w, http.StatusUnauthorized, protocol.CodeUnauthorized, "", "not signed in")
			return
		}
		writeJSON(w, http.StatusOK, wire.Session{CSRFToken: ck.Value})
	case http.MethodDelete:
		if err := s.api.SignOut(w, r); err != nil {
			s.fail(w, "sign-out", err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "", "use GET, POST or DELETE")
	}
}

// signIn checks the posted org, user and password and, when they match,
// starts a session (the API sets its cookies).
func (s *sessions) signIn(w http.ResponseWriter, r *http.Request) {
	const form = `{"org": "…", "user": "…", "password": "…"}`
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, protocol.CodeInvalid, "", "send the sign-in as JSON: "+form)
		return
	}
	var req wire.SessionRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, protocol.CodeInvalid, "", "the body is not "+form)
		return
	}
	csrf, err := s.api.SignIn(w, r, req.Org, req.User, req.Password)
	if err != nil {
		s.fail(w, "sign-in", err)
		return
	}
	writeJSON(w, http.StatusOK, wire.Session{CSRFToken: csrf})
}

// fail answers err: an *apierr.HTTPError as it is, anything else 503
// (logged, never with the request's credentials).
func (s *sessions) fail(w http.ResponseWriter, what string, err error) {
	var he *apierr.HTTPError
	if errors.As(err, &he) {
		writeError(w, he.Status, he.Body.Code, he.Body.Field, he.Body.Message)
		return
	}
	s.log.Error("dashboard "+what+" failed", "err", err)
	writeError(w, http.StatusServiceUnavailable, "unavailable", "", what+" could not be done; try again")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, field, message string) {
	writeJSON(w, status, protocol.Error{Code: code, Field: field, Message: message})
}
