package api

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	yaml "github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// TestOpenAPIDocumentIsLintClean loads the served document with two OpenAPI
// libraries and fails on any finding: kin-openapi's validation of the
// document (the OpenAPI 3.0 rules: schemas, parameters, references,
// defaults and examples), and the recommended rules of spectral's and
// vacuum's OAS rulesets that it does not check, over pb33f/libopenapi's model
// and index (rule names as theirs).
func TestOpenAPIDocumentIsLintClean(t *testing.T) {
	e := newTestEnv(t)
	res := e.send("GET", "/v1/openapi.json", "", nil)
	if res.status != 200 {
		t.Fatalf("openapi.json: %s", res)
	}
	findings := lintOpenAPI(t, res.body)
	for _, f := range findings {
		t.Errorf("%s", f)
	}
}

// TestOpenAPILintFindsWhatItChecks runs the linter on a document that breaks
// each rule once, so a rule that stopped finding anything fails here.
func TestOpenAPILintFindsWhatItChecks(t *testing.T) {
	const bad = `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
	"paths": {"/v1/things/{id}": {"get": {"operationId": "getThing", "tags": ["nowhere"], "summary": "s",
		"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
		"responses": {"200": {"description": "OK", "content": {"application/json": {"schema":
			{"$ref": "#/components/schemas/Thing", "description": "a sibling"}}}}}}}},
	"components": {"schemas": {
		"Thing": {"type": "object", "properties": {"kind": {"type": "string", "enum": ["a", "a", 1]}}},
		"Unused": {"type": "object", "description": "nobody refers to it"}}}}`
	got := strings.Join(lintOpenAPI(t, []byte(bad)), "\n")
	for _, rule := range []string{"oas3-api-servers", "info-license", "info-contact", "info-description", "no-$ref-siblings",
		"operation-4xx-response", "operation-description", "operation-tag-defined", "openapi-tags", "oas3-parameter-description",
		"oas3-unused-component", "component-description", "duplicated-entry-in-enum", "typed-enum"} {
		if !strings.Contains(got, rule+":") {
			t.Errorf("rule %s found nothing in a document that breaks it; findings:\n%s", rule, got)
		}
	}
}

// lintOpenAPI is every finding in doc, each "rule: where: what".
func lintOpenAPI(t *testing.T, doc []byte) []string {
	t.Helper()
	var out []string
	add := func(rule, where, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s: %s", rule, where, fmt.Sprintf(format, args...)))
	}

	kin, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the document: %v", err)
	}
	if err := kin.Validate(context.Background()); err != nil {
		add("oas3-schema", "document", "%v", err)
	}

	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatalf("libopenapi cannot read the document: %v", err)
	}
	m, err := d.BuildV3Model()
	if err != nil {
		t.Fatalf("libopenapi cannot build the document's model: %v", err)
	}
	lintInfo(&m.Model, add)
	lintOperations(&m.Model, add)
	for _, r := range m.Index.GetRawReferencesSequenced() {
		if r.HasSiblingProperties {
			var keys []string
			for _, k := range r.SiblingKeys {
				keys = append(keys, k.Value)
			}
			add("no-$ref-siblings", "$."+strings.Join(r.SourcePath, "."), "$ref %s has siblings %v", r.RawRef, keys)
		}
	}
	lintComponents(m, add)
	return out
}

type addFinding func(rule, where, format string, args ...any)

// lintInfo checks what the document says of the API as a whole.
func lintInfo(doc *v3.Document, add addFinding) {
	info := doc.Info
	if info.Description == "" {
		add("info-description", "info", "no description")
	}
	if info.License == nil || info.License.Name == "" {
		add("info-license", "info", "no license")
	} else if info.License.URL == "" {
		add("license-url", "info.license", "no url")
	}
	if info.Contact == nil || info.Contact.Name == "" || info.Contact.URL == "" {
		add("info-contact", "info", "no contact with a name and url")
	}
	if len(doc.Servers) == 0 {
		add("oas3-api-servers", "servers", "none")
	}
	for i, s := range doc.Servers {
		if s.URL == "" || strings.HasSuffix(s.URL, "/") {
			add("oas3-server-trailing-slash", fmt.Sprintf("servers[%d]", i), "url %q is empty or ends with /", s.URL)
		}
	}
	if len(doc.Tags) == 0 {
		add("openapi-tags", "tags", "none")
	}
	for _, tag := range doc.Tags {
		if tag.Description == "" {
			add("tag-description", "tags."+tag.Name, "no description")
		}
	}
}

// lintOperations checks each operation.
func lintOperations(doc *v3.Document, add addFinding) {
	tags := map[string]bool{}
	for _, tag := range doc.Tags {
		tags[tag.Name] = true
	}
	ids := map[string]string{}
	for path, item := range doc.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			at := strings.ToUpper(method) + " " + path
			switch {
			case op.OperationId == "":
				add("operation-operationId", at, "no operationId")
			case ids[op.OperationId] != "":
				add("operation-operationId-unique", at, "operationId %s is %s's too", op.OperationId, ids[op.OperationId])
			}
			ids[op.OperationId] = at
			if op.Description == "" {
				add("operation-description", at, "no description")
			}
			if len(op.Tags) != 1 {
				add("operation-singular-tag", at, "tags %v: want one", op.Tags)
			}
			for _, tag := range op.Tags {
				if !tags[tag] {
					add("operation-tag-defined", at, "tag %s is not in the document's tags", tag)
				}
			}
			for _, p := range op.Parameters {
				if p.Description == "" {
					add("oas3-parameter-description", at, "parameter %s has no description", p.Name)
				}
			}
			var codes []string
			if op.Responses != nil {
				codes = slices.Collect(op.Responses.Codes.KeysFromOldest())
			}
			if !slices.ContainsFunc(codes, func(c string) bool { return c[0] == '2' || c[0] == '3' }) {
				add("operation-success-response", at, "no 2xx or 3xx answer")
			}
			if !slices.ContainsFunc(codes, func(c string) bool { return c[0] == '4' }) {
				add("operation-4xx-response", at, "no 4xx answer")
			}
		}
	}
}

// lintComponents checks the component schemas: each is used and described,
// and each enum is of its schema's type with no value twice.
func lintComponents(m *libopenapi.DocumentModel[v3.Document], add addFinding) {
	used := map[string]bool{}
	for _, r := range m.Index.GetRawReferencesSequenced() {
		used[r.Definition] = true
	}
	if c := m.Model.Components; c != nil && c.Schemas != nil {
		for name, proxy := range c.Schemas.FromOldest() {
			at := "#/components/schemas/" + name
			if !used[at] {
				add("oas3-unused-component", at, "no $ref names it")
			}
			if s := proxy.Schema(); s == nil || s.Description == "" {
				add("component-description", at, "no description")
			}
		}
	}
	for _, e := range m.Index.GetAllEnums() {
		seen := map[string]bool{}
		for _, v := range e.Node.Content {
			if seen[v.Value] {
				add("duplicated-entry-in-enum", e.Path, "%q is listed twice", v.Value)
			}
			seen[v.Value] = true
			if e.Type != nil && !enumValueIs(e.Type.Value, v) {
				add("typed-enum", e.Path, "%q is not a %s", v.Value, e.Type.Value)
			}
		}
	}
}

// enumValueIs says an enum's value v (a YAML node) is of the JSON schema
// type typ.
func enumValueIs(typ string, v *yaml.Node) bool {
	switch typ {
	case "string":
		return v.Tag == "!!str"
	case "integer":
		return v.Tag == "!!int"
	case "number":
		return v.Tag == "!!int" || v.Tag == "!!float"
	case "boolean":
		return v.Tag == "!!bool"
	}
	return true
}
