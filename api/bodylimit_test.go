package api

import (
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
)

var pathParam = regexp.MustCompile(`:[a-z_]+`)

// Every route of the table refuses a body over its limit with a 413, both
// when Content-Length announces it (at once, unread) and when it comes
// chunked (reading stops at the limit), and nothing is stored.
func TestEveryRouteBoundsItsBody(t *testing.T) {
	e := newTestEnv(t)
	app, inst := e.fixture()
	// The app's and the install's routes get real IDs, so that they read the body.
	ids := strings.NewReplacer("/apps/:id", "/apps/"+app.ID, "/installs/:id", "/installs/"+inst.ID)
	before := e.snapshot()
	auth := http.Header{"Authorization": {"Bearer " + e.token}}
	chunked := 0
	for _, r := range e.srv.routes {
		path := "/v1" + pathParam.ReplaceAllString(ids.Replace(r.path), "x")
		limit := r.bodyLimit()
		status, body := testutil.DeclareBody(t, e.http.Listener.Addr().String(), r.method, path, limit+1, auth)
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, protocol.CodeTooLarge) {
			t.Errorf("%s %s announcing %d bytes: %d %s, want 413 too_large", r.method, r.path, limit+1, status, body)
		}
		if r.doc.body == nil {
			continue // it reads no body
		}
		chunked++
		req := newRequest(t, e, r.method, path)
		req.Body, req.ContentLength = io.NopCloser(testutil.OverLimit(limit+1)), -1
		req.Header.Set("Content-Type", append(r.doc.bodyTypes, "application/json")[0])
		req.Header.Set("Authorization", "Bearer "+e.token)
		res := e.do(req)
		if res.status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s %s with %d bytes chunked: %s, want 413", r.method, r.path, limit+1, res)
		}
	}
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Errorf("the database changed:\nbefore %v\nafter  %v", before, after)
	}
	t.Logf("%d routes announcing a body over their limit, %d of them also sent one chunked", len(e.srv.routes), chunked)
}
