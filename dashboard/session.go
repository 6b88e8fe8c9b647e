package dashboard

import (
	"crypto/rand"
	"encoding/hex"
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

// sessions serves /ui/session: POST signs in with an API token, GET gives
// the signed-in page its CSRF token, DELETE signs out.
type sessions struct {
	tokens TokenChecker
	log    *slog.Logger
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
		for _, name := range []string{api.SessionCookie, api.CSRFCookie} {
			http.SetCookie(w, cookie(r, name, "", -1))
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "", "use GET, POST or DELETE")
	}
}

// signIn checks the posted token against the API's authentication and, if
// it is valid, sets it in the session cookie with a new CSRF token.
func (s *sessions) signIn(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, protocol.CodeInvalid, "", "send the token as JSON: {\"token\": \"…\"}")
		return
	}
	var req wire.SessionRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, protocol.CodeInvalid, "token", "the body is not {\"token\": \"…\"}")
		return
	}
	if req.Token = strings.TrimSpace(req.Token); req.Token == "" {
		writeError(w, http.StatusBadRequest, protocol.CodeInvalid, "token", "an API token is required")
		return
	}
	ok, err := s.tokens.CheckToken(w, r, req.Token)
	var he *apierr.HTTPError
	if errors.As(err, &he) {
		writeError(w, he.Status, he.Body.Code, he.Body.Field, he.Body.Message)
		return
	}
	if err != nil {
		s.log.Error("dashboard sign-in: checking the token failed", "err", err)
		writeError(w, http.StatusServiceUnavailable, "unavailable", "", "the token could not be checked; try again")
		return
	}
	if !ok {
		writeError(w, http.StatusUnauthorized, protocol.CodeUnauthorized, "token", "this API token is not valid (mistyped, revoked or never issued)")
		return
	}
	csrf := randomToken()
	http.SetCookie(w, cookie(r, api.SessionCookie, req.Token, 0))
	http.SetCookie(w, cookie(r, api.CSRFCookie, csrf, 0))
	writeJSON(w, http.StatusOK, wire.Session{CSRFToken: csrf})
}

// cookie is a session cookie of the dashboard: HttpOnly, SameSite=Strict,
// for the whole origin (the API reads it), Secure when the request came over
// TLS; maxAge -1 deletes it.
func cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	secure := r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
	return &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: secure,
		SameSite: http.SameSiteStrictMode}
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, field, message string) {
	writeJSON(w, status, protocol.Error{Code: code, Field: field, Message: message})
}
