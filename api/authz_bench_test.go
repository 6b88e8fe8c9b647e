package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/store"
	"github.com/outpost-dev/outpost/store/storetest"
)

// BenchmarkAuthorization measures what authentication and authorization add
// to a request, cache warm: the two middlewares of a route (needing
// operate, on an install, for an operator limited to its app: the slowest
// path, one install read) in front of a handler that does nothing, with a
// dashboard session and with an API token. Reports p50 and p99 per request.
func BenchmarkAuthorization(b *testing.B) {
	s := storetest.Open(b, store.Postgres)
	srv := New(Config{Store: s, Logger: slog.New(slog.DiscardHandler)})
	ctx := b.Context()
	a, err := s.CreateOrgWithAdmin(ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	app, err := s.CreateApp(ctx, a.Org.ID, "app", "")
	if err != nil {
		b.Fatal(err)
	}
	inst, _, _, err := s.CreateInstall(ctx, a.Org.ID, app.ID, "one", nil)
	if err != nil {
		b.Fatal(err)
	}
	var r route
	for _, rt := range srv.routes {
		if rt.doc.id == "provisionInstall" {
			r = rt
		}
	}
	for _, c := range []struct {
		name  string
		roles []store.RoleBinding
	}{{"unlimited-admin", []store.RoleBinding{{Role: store.RoleAdmin}}}, {"operator-of-app", []store.RoleBinding{{Role: store.RoleOperator, AppID: app.ID}}}} {
		u, err := s.CreateUser(ctx, store.NewUser{OrgID: a.Org.ID, Name: c.name, Roles: c.roles})
		if err != nil {
			b.Fatal(err)
		}
		_, tok, err := s.CreateAPIToken(ctx, store.NewAPIToken{OrgID: a.Org.ID, UserID: u.ID, Name: "t", Scopes: []string{"deploy"}})
		if err != nil {
			b.Fatal(err)
		}
		_, ses, err := s.CreateSession(ctx, u, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/token", func(b *testing.B) {
			benchAuth(b, srv, r, inst.ID, func(req *http.Request) { req.Header.Set("Authorization", "Bearer "+tok) })
		})
		b.Run(c.name+"/session", func(b *testing.B) {
			benchAuth(b, srv, r, inst.ID, func(req *http.Request) {
				req.Method = http.MethodGet // no CSRF proof needed: the same chain
				req.AddCookie(&http.Cookie{Name: SessionCookie, Value: ses})
			})
		})
	}
}

func benchAuth(b *testing.B, srv *Server, r route, installID string, credential func(*http.Request)) {
	e := echo.New()
	reached := 0
	h := srv.authenticate(srv.authorize(r)(func(echo.Context) error { reached++; return nil }))
	times := make([]time.Duration, 0, b.N)
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/installs/"+installID+"/provision", nil)
		credential(req)
		c := e.NewContext(req, httptest.NewRecorder())
		c.SetParamNames("id")
		c.SetParamValues(installID)
		start := time.Now()
		if err := h(c); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	if reached == 0 {
		b.Fatal("the handler was never reached")
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds())/1e3, "p99-µs")
}
