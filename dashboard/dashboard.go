package dashboard

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// Prefix is where the dashboard is served.
const Prefix = "/ui/"

//go:embed assets
var assets embed.FS

// Sessions signs users in and out (the API's sessions).
type Sessions interface {
	// SignIn checks a user's password, sets the session cookies on w and
	// returns the CSRF token; an *apierr.HTTPError is answered as it is (400,
	// 401, a 429 whose Retry-After it set on w).
	SignIn(w http.ResponseWriter, r *http.Request, org, user, password string) (string, error)
	// SignOut revokes the request's session and clears the cookies.
	SignOut(w http.ResponseWriter, r *http.Request) error
}

// Config is what the dashboard needs.
type Config struct {
	Sessions Sessions
	Logger   *slog.Logger
}

// contentSecurityPolicy allows the page its own scripts, styles and API and
// nothing else: no inline script or style, no frames, no other origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// New returns the dashboard's handler, for the paths under Prefix (and
// Prefix without its slash, which redirects).
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic("dashboard: " + err.Error())
	}
	mux := http.NewServeMux()
	mux.Handle(Prefix, http.StripPrefix(Prefix, withETags(sub, http.FileServerFS(sub))))
	mux.Handle(Prefix+"session", &sessions{api: cfg.Sessions, log: cfg.Logger})
	mux.Handle(strings.TrimSuffix(Prefix, "/"), http.RedirectHandler(Prefix, http.StatusMovedPermanently))
	return secured(mux)
}

// withETags gives each asset an ETag (a digest of its bytes, which the
// binary embeds), so a returning browser revalidates with If-None-Match and
// gets a 304 (http.ServeContent honours the header); embedded files have no
// modification time for Last-Modified.
func withETags(fsys fs.FS, next http.Handler) http.Handler {
	tags := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		sum := sha256.Sum256(b)
		tags[p] = `"` + hex.EncodeToString(sum[:16]) + `"`
		return err
	})
	if err != nil {
		panic("dashboard: " + err.Error())
	}
	tags[""] = tags["index.html"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tag, ok := tags[r.URL.Path]; ok {
			w.Header().Set("ETag", tag)
		}
		next.ServeHTTP(w, r)
	})
}

// secured sets the security headers of every dashboard answer.
func secured(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// Register mounts the dashboard on the API's echo, beside the /v1 routes
// (api/routes.go) it calls.
func Register(e *echo.Echo, cfg Config) {
	h := echo.WrapHandler(New(cfg))
	e.Any(strings.TrimSuffix(Prefix, "/"), h)
	e.Any(Prefix+"*", h)
}
