package api

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi3"

	"github.com/outpost-dev/outpost/api/wire"
)

// rawBody is a request or answer body that is not JSON (a gzipped tar):
// its description. Its schema is a binary string.
type rawBody string

// openAPIDocument describes routes (plus /healthz) as an OpenAPI 3.0
// document: the route table says what each operation takes and answers, as
// wire types, and the schemas are reflected from those types.
func openAPIDocument(routes []route) ([]byte, error) {
	r := openapi3.NewReflector()
	r.DefaultOptions = append(r.DefaultOptions, schemaOptions()...)
	r.AddTypeMapping(wire.InstallListItem{}, wire.Install{}) // the same fields, always there
	describeAPI(r.SpecEns())
	health := route{method: http.MethodGet, path: "/healthz", doc: operation{id: "healthz", tag: "meta", public: true,
		summary:     "Health: answers once the database does",
		description: "200 while the API's database answers, 503 (status unavailable) while it does not.",
		status:      http.StatusOK, result: wire.Health{}, otherResults: map[int]any{http.StatusServiceUnavailable: wire.Health{}}}}
	for _, rt := range append([]route{health}, routes...) {
		path := openAPIPath(rt.path)
		if rt.path != health.path {
			path = "/v1" + path
		}
		if err := addOperation(r, rt, path); err != nil {
			return nil, fmt.Errorf("%s %s: %w", rt.method, path, err)
		}
	}
	// A schema of its own is never null: a field that may be null says so.
	for name, s := range r.Spec.Components.Schemas.MapOfSchemaOrRefValues {
		if s.Schema != nil {
			s.Schema.Nullable = nil
			r.Spec.Components.Schemas.MapOfSchemaOrRefValues[name] = s
		}
	}
	return r.Spec.MarshalJSON()
}

// describeAPI sets what the document says of the API as a whole.
func describeAPI(spec *openapi3.Spec) {
	spec.Openapi = "3.0.3"
	spec.Info.WithTitle("Outpost control API").WithVersion("1").
		WithDescription("Manage apps, installs, runners and jobs of an Outpost org. Authenticate with " +
			"`Authorization: Bearer <API token>`; the token's org scopes everything.").
		WithLicense(openapi3.License{Name: "Apache-2.0", URL: ptr("https://www.apache.org/licenses/LICENSE-2.0")}).
		WithContact(openapi3.Contact{Name: ptr("Outpost"), URL: ptr("https://github.com/outpost-dev/outpost")})
	spec.Servers = []openapi3.Server{{URL: "{scheme}://{address}",
		Description: ptr("the control plane's API, where `outpost api` (or `outpost dev`) listens"),
		Variables: map[string]openapi3.ServerVariable{
			"scheme":  {Enum: []string{"http", "https"}, Default: "http"},
			"address": {Default: "127.0.0.1:8080", Description: ptr("host:port (outpost api -api-listen)")},
		}}}
	spec.SetHTTPBearerTokenSecurity("bearer", "", "an API token (POST /v1/tokens), or the dashboard's session cookie")
	spec.Security = []map[string][]string{{"bearer": {}}}
	for _, t := range apiTags {
		spec.Tags = append(spec.Tags, openapi3.Tag{Name: t.name, Description: ptr(t.description)})
	}
}

// apiTags group the operations, in the order a reader meets them.
var apiTags = []struct{ name, description string }{
	{"meta", "The API itself: its health and this document."},
	{"tokens", "The caller's org and its API tokens."},
	{"users", "The org's users and service accounts, their roles, and who the caller is."},
	{"audit", "The org's audit log of changing calls."},
	{"apps", "The vendor's products."},
	{"components", "The deployable parts of an app."},
	{"configs", "An app's config versions, synced from a directory of TOML files."},
	{"builds", "The artifacts built from components' sources, and which an install runs."},
	{"installs", "Customers' copies of an app: inputs, labels, windows, drift and outputs."},
	{"operations", "The mutating operations on an install, their steps and approvals."},
	{"releases", "Config versions rolled out to many installs, in batches."},
	{"notifications", "Webhooks and Slack messages when operations and releases end or wait for approval, and their deliveries."},
	{"runners", "The runners that do the work in customers' accounts, their tokens and versions."},
	{"jobs", "Units of work for one runner, and their logs."},
	{"commands", "Debug commands run by an install's runner."},
	{"actions", "The vendor's actions (actions/<name>.toml) and their runs on an install's runner."},
	{"runbooks", "The vendor's runbooks (runbooks/<name>.toml): actions, deploys and approval gates run in order, resumable."},
	{"support", "Diagnostics collected by an install's runner: support bundles and logs."},
}

// addOperation adds rt to the document at path.
func addOperation(r *openapi3.Reflector, rt route, path string) error {
	d := rt.doc
	oc, err := r.NewOperationContext(rt.method, path)
	if err != nil {
		return err
	}
	oc.SetID(d.id)
	oc.SetTags(d.tag)
	oc.SetSummary(d.summary)
	oc.SetDescription(cmp.Or(d.description, d.summary+"."))
	op := oc.(openapi3.OperationExposer).Operation()
	op.Parameters = parameters(rt)
	if d.public {
		op.WithMapOfAnythingItem("security", []any{}) // an empty list overrides the document's
	}
	if d.body != nil {
		if err := addBody(oc, op, d); err != nil {
			return err
		}
	}
	addResult(oc, d.status, d.result, d.resultType)
	if d.events {
		oc.AddRespStructure(nil, openapi.WithHTTPStatus(d.status), openapi.WithContentType("text/event-stream"))
	}
	for code, result := range d.otherResults {
		addResult(oc, code, result, "")
	}
	for _, code := range rt.errorStatuses() {
		body := any(wire.Error{})
		if b, ok := d.errorBodies[code]; ok {
			body = b
		}
		oc.AddRespStructure(body, openapi.WithHTTPStatus(code), withDescription(http.StatusText(code)))
	}
	return r.AddOperation(oc)
}

// addBody documents the request body: a JSON wire type, or a raw body in
// each of its media types.
func addBody(oc openapi.OperationContext, op *openapi3.Operation, d operation) error {
	raw, ok := d.body.(rawBody)
	if !ok {
		oc.AddReqStructure(d.body, func(cu *openapi.ContentUnit) {
			cu.Customize = func(cor openapi.ContentOrReference) {
				if rb, ok := cor.(*openapi3.RequestBodyOrRef); ok && rb.RequestBody != nil {
					rb.RequestBody.WithRequired(true)
				}
			}
		})
		return nil
	}
	if len(d.bodyTypes) == 0 {
		return fmt.Errorf("the raw body of %s names no media type", d.id)
	}
	body := openapi3.RequestBody{Description: ptr(string(raw)), Required: ptr(true), Content: map[string]openapi3.MediaType{}}
	for _, t := range d.bodyTypes {
		body.Content[t] = binary()
	}
	op.RequestBody = &openapi3.RequestBodyOrRef{RequestBody: &body}
	return nil
}

// addResult documents an answer with status code: a JSON wire type, a raw
// body of media type resultType, or none (result nil).
func addResult(oc openapi.OperationContext, code int, result any, resultType string) {
	raw, ok := result.(rawBody)
	if !ok {
		oc.AddRespStructure(result, openapi.WithHTTPStatus(code), withDescription(http.StatusText(code)))
		return
	}
	oc.AddRespStructure(nil, openapi.WithHTTPStatus(code), withDescription(string(raw)),
		openapi.WithContentType(resultType), func(cu *openapi.ContentUnit) { cu.Format = "binary" })
}

func withDescription(text string) openapi.ContentOption {
	return func(cu *openapi.ContentUnit) { cu.Description = text }
}

func binary() openapi3.MediaType {
	s := (&openapi3.Schema{}).WithType(openapi3.SchemaTypeString).WithFormat("binary")
	return openapi3.MediaType{Schema: &openapi3.SchemaOrRef{Schema: s}}
}

// errorStatuses are the error answers of a route: those its table entry
// names, and those every route of its kind has.
func (r route) errorStatuses() []int {
	d := r.doc
	errs := slices.Clone(d.errors)
	if !d.public {
		errs = append(errs, http.StatusUnauthorized, http.StatusTooManyRequests)
	}
	if len(pathParams(r.path)) > 0 {
		errs = append(errs, http.StatusNotFound)
	}
	if d.body != nil || len(d.query) > 0 {
		errs = append(errs, http.StatusBadRequest)
	}
	if d.body != nil || len(errs) == 0 {
		// Every route refuses a body over its limit (limitBody), one
		// without a body too; documented where nothing else is a 4xx.
		errs = append(errs, http.StatusRequestEntityTooLarge)
	}
	return errs
}

// parameters are the route's path parameters, then its query parameters.
func parameters(r route) []openapi3.ParameterOrRef {
	var out []openapi3.ParameterOrRef
	names := strings.Split(r.path, "/")
	for i, seg := range names {
		if name, ok := strings.CutPrefix(seg, ":"); ok {
			p := openapi3.Parameter{Name: name, In: openapi3.ParameterInPath, Required: ptr(true),
				Description: ptr(pathParamDoc(names[i-1], name)), Schema: typed("string")}
			out = append(out, p.ToParameterOrRef())
		}
	}
	for _, q := range r.doc.query {
		p := openapi3.Parameter{Name: q.name, In: openapi3.ParameterInQuery, Description: ptr(q.description), Schema: typed(q.typ)}
		out = append(out, p.ToParameterOrRef())
	}
	return out
}

// pathParamDoc describes the path parameter name, which follows the
// segment parent ("installs" in /installs/:id).
func pathParamDoc(parent, name string) string {
	what := strings.ReplaceAll(strings.TrimSuffix(parent, "s"), "-", " ")
	switch name {
	case "version":
		return "a config version: a number (1, 2, …) or latest"
	case "name", "step":
		return "the " + what + "'s name"
	}
	return "the " + what + "'s ID"
}

func typed(t string) *openapi3.SchemaOrRef {
	return &openapi3.SchemaOrRef{Schema: (&openapi3.Schema{}).WithType(openapi3.SchemaType(t))}
}

// openAPIPath turns echo's ":param" segments into "{param}".
func openAPIPath(echoPath string) string {
	parts := strings.Split(echoPath, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

func pathParams(echoPath string) []string {
	var out []string
	for _, p := range strings.Split(echoPath, "/") {
		if strings.HasPrefix(p, ":") {
			out = append(out, p[1:])
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
