package gateway_test

import (
	"context"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/gateway"
	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
)

var pathParam = regexp.MustCompile(`:[a-z_]+`)

// The gateway mounts exactly its route table, and every route refuses a body
// over its limit with a 413: announced by Content-Length (at once) or sent
// chunked (reading stops at the limit); nothing is stored.
func TestEveryRouteBoundsItsBody(t *testing.T) {
	e := newEnv(t, gateway.Config{})
	r := e.newRunner("r1")
	job := e.enqueue(r, "k1")
	var mounted, table []string
	for _, rt := range e.g.Handler().(*echo.Echo).Routes() {
		mounted = append(mounted, rt.Method+" "+rt.Path)
	}
	for _, rt := range e.g.Routes() {
		table = append(table, rt.Method+" "+rt.Path)
	}
	slices.Sort(mounted)
	slices.Sort(table)
	if !slices.Equal(mounted, table) {
		t.Fatalf("mounted routes %v, the table lists %v", mounted, table)
	}
	before := e.rowCounts()
	auth := http.Header{"Authorization": {"Bearer " + r.Token}}
	chunked := 0
	for _, rt := range e.g.Routes() {
		path := pathParam.ReplaceAllString(strings.ReplaceAll(rt.Path, ":id", job.ID), "x")
		status, body := testutil.DeclareBody(t, e.srv.Listener.Addr().String(), rt.Method, path, rt.MaxBody+1, auth)
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, protocol.CodeTooLarge) {
			t.Errorf("%s %s announcing %d bytes: %d %s, want 413 too_large", rt.Method, rt.Path, rt.MaxBody+1, status, body)
		}
		if rt.Auth == gateway.AuthState {
			continue // without a running job's credential the body is not read (401)
		}
		if rt.Path == "/healthz" {
			continue // reads no body: a chunked one is never read to its limit
		}
		chunked++
		req, _ := http.NewRequestWithContext(context.Background(), rt.Method, e.srv.URL+path, io.NopCloser(testutil.OverLimit(rt.MaxBody+1)))
		req.Header = auth.Clone()
		req.Header.Set("Content-Type", "application/json")
		res, err := e.client.Do(req)
		if err != nil {
			t.Fatalf("%s %s chunked: %v", rt.Method, rt.Path, err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s %s with %d bytes chunked: %d %s, want 413", rt.Method, rt.Path, rt.MaxBody+1, res.StatusCode, got)
		}
	}
	if after := e.rowCounts(); !maps.Equal(before, after) {
		t.Errorf("rows per table before %v, after %v", before, after)
	}
	t.Logf("%d routes announcing a body over their limit, %d of them also sent one chunked", len(table), chunked)
}

// rowCounts counts the rows of every table.
func (e *env) rowCounts() map[string]int64 {
	e.tb.Helper()
	tables, err := e.s.DB().Migrator().GetTables()
	if err != nil {
		e.tb.Fatal(err)
	}
	out := map[string]int64{}
	for _, table := range tables {
		var n int64
		if err := e.s.DB().Table(table).Count(&n).Error; err != nil {
			e.tb.Fatal(err)
		}
		out[table] = n
	}
	return out
}
