package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/protocol"
)

// TestOpenAPIDocumentsEveryRoute walks the routes echo serves and fails if the
// served document lacks one (or documents one that is not served), or is not
// internally consistent.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	e := newTestEnv(t)
	var doc struct {
		OpenAPI    string                               `json:"openapi"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	res := e.send("GET", "/v1/openapi.json", "", nil)
	if res.status != 200 || !strings.HasPrefix(res.header.Get("Content-Type"), "application/json") {
		t.Fatalf("openapi.json: %s", res)
	}
	if err := json.Unmarshal(res.body, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		t.Fatalf("openapi = %q, want 3.0.x", doc.OpenAPI)
	}

	ec := e.srv.Handler()
	param := regexp.MustCompile(`:([^/]+)`)
	served := map[string]bool{}
	for _, r := range ec.Routes() {
		if r.Method == echo.RouteNotFound || !strings.HasPrefix(r.Path, "/v1/") {
			continue
		}
		path := param.ReplaceAllString(r.Path, "{$1}")
		key := r.Method + " " + path
		served[key] = true
		op, ok := doc.Paths[path][strings.ToLower(r.Method)]
		if !ok {
			t.Errorf("%s is served but not in the OpenAPI document", key)
			continue
		}
		// Every path parameter is declared.
		declared := map[string]bool{}
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			p := p.(map[string]any)
			if p["in"] == "path" {
				declared[p["name"].(string)] = true
			}
		}
		for _, m := range param.FindAllStringSubmatch(r.Path, -1) {
			if !declared[m[1]] {
				t.Errorf("%s: path parameter %s is not declared", key, m[1])
			}
		}
		if _, ok := op["responses"].(map[string]any); !ok {
			t.Errorf("%s has no responses", key)
		}
	}
	if len(served) < 25 {
		t.Fatalf("only %d /v1 routes served", len(served))
	}
	for path, ops := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for method := range ops {
			if key := strings.ToUpper(method) + " " + path; !served[key] {
				t.Errorf("%s is documented but not served", key)
			}
		}
	}

	// Every $ref names a schema the document defines.
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "$ref" {
					name, ok := strings.CutPrefix(x.(string), "#/components/schemas/")
					if _, found := doc.Components.Schemas[name]; !ok || !found {
						t.Errorf("%s: $ref %v does not resolve", at, x)
					}
				}
				walk(at+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s/%d", at, i), x)
			}
		}
	}
	var raw any
	json.Unmarshal(res.body, &raw)
	walk("", raw)

	if _, ok := doc.Paths["/healthz"][strings.ToLower(http.MethodGet)]; !ok {
		t.Error("GET /healthz is not documented")
	}
}

// TestRoutesTakeAndAnswerWireTypes: what the route table says a route takes
// and answers is a type of package wire, or a protocol type wire names as
// its own (documented through it), or a raw body; never a model.
func TestRoutesTakeAndAnswerWireTypes(t *testing.T) {
	wirePkg, protocolPkg := reflect.TypeFor[wire.Error]().PkgPath(), reflect.TypeFor[protocol.Job]().PkgPath()
	for _, r := range (&Server{}).routeTable() {
		d := r.doc
		bodies := []any{d.body, d.result}
		for _, m := range []map[int]any{d.errorBodies, d.otherResults} {
			for _, b := range m {
				bodies = append(bodies, b)
			}
		}
		for _, b := range bodies {
			if _, raw := b.(rawBody); b == nil || raw {
				continue
			}
			typ := reflect.TypeOf(b)
			if typ.PkgPath() != wirePkg && (typ.PkgPath() != protocolPkg || wire.TypeDoc(typ) == "") {
				t.Errorf("%s %s: %s is not a wire type", r.method, r.path, typ)
			}
		}
	}
}
