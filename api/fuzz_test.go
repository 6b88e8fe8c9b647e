package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/protocol"
)

// requestTypes are the Go types of the /v1 JSON request bodies, as the
// route table names them, by name (the fuzz input picks one by index).
var requestTypes = func() []requestType {
	var out []requestType
	for _, r := range (&Server{}).routeTable() {
		t := reflect.TypeOf(r.doc.body)
		if r.doc.body == nil || r.doc.bodyTypes != nil || slices.ContainsFunc(out, func(rt requestType) bool { return rt.schema == t.Name() }) {
			continue
		}
		out = append(out, requestType{t.Name(), func() any { return reflect.New(t).Interface() }})
	}
	slices.SortFunc(out, func(a, b requestType) int { return strings.Compare(a.schema, b.schema) })
	return out
}()

type requestType struct {
	schema string
	new    func() any
}

// TestFuzzBindHasEveryJSONBody: FuzzBind tries every request type.
func TestFuzzBindHasEveryJSONBody(t *testing.T) {
	if len(requestTypes) < 18 {
		t.Fatalf("only %d request types: %v", len(requestTypes), requestTypes)
	}
}

// FuzzBind fuzzes apierr.Bind, the decoder of every /v1 JSON body, with each
// request type. Any body either decodes, and then re-encoding and decoding
// again gives the same value, or is a 400 invalid_field with a message; a
// body that is one valid JSON value yet refused names the field ("(body)"
// for the top level), and a wrong type's field is a path of the type.
func FuzzBind(f *testing.F) {
	for i, rt := range requestTypes {
		if body, ok := matrixBodies[rt.schema]; ok {
			f.Add(uint8(i), []byte(strings.NewReplacer("{apps}", "app_1", "{installs}", "ins_1", "{name}", "db").Replace(body)))
		}
		f.Add(uint8(i), []byte(`{}`))
	}
	for _, body := range []string{
		`{"name": "x"`, `name=x`, `["demo"]`, `{"name":"a"}{"name":"b"}`, `{"name":"x","colour":"red"}`, `{"name":5}`,
		`{"windows":[{"days":["mon"],"start":"02:00","duration":"4h","time_zone":"Europe/Berlin"}]}`,
		`{"installs":{"selector":{"env":"prod"}},"batch_size":2,"pause_between_batches":"10m"}`,
		`{"config_version":1.5}`, `{"set":[{"name":"region","value":"us-east-1","sensitive":true}],"remove":["old"]}`,
		`{"app_id":"app_1","name":"acme","inputs":[{"name":"db_password","value":"s3cret"}],"labels":{"env":"prod"}}`,
		`{"name":"db","type":"terraform_module","dependencies":["net"],"config":{"source":"modules/db","n":1e400}}`,
		`{"command":["kubectl","get","pods"],"timeout_seconds":-1}`, `{"name":"x","description":"a\u0000b"}`, "\ufeff{}", `null`, ` `,
	} {
		f.Add(uint8(len(body)), []byte(body))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		rt := requestTypes[int(which)%len(requestTypes)]
		v := rt.new()
		err := bind(body, v)
		if err != nil {
			checkBindError(t, rt.schema, reflect.TypeOf(v), body, err)
			return
		}
		again := rt.new()
		first, merr := json.Marshal(v)
		if merr != nil {
			t.Fatalf("%s: %q decoded to %+v, which does not encode: %v", rt.schema, body, v, merr)
		}
		if err := bind(first, again); err != nil {
			t.Fatalf("%s: %q decoded to %s, which does not decode: %v", rt.schema, body, first, err)
		}
		if second, _ := json.Marshal(again); !bytes.Equal(first, second) {
			t.Fatalf("%s: %q: encode, decode, encode changed the value:\n%s\n%s", rt.schema, body, first, second)
		}
	})
}

// bind runs apierr.Bind on body as a request's.
func bind(body []byte, v any) error {
	req := httptest.NewRequest(http.MethodPost, "/v1/x", bytes.NewReader(body))
	req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	return apierr.Bind(echo.New().NewContext(req, httptest.NewRecorder()), v)
}

func checkBindError(t *testing.T, schema string, typ reflect.Type, body []byte, err error) {
	var he *apierr.HTTPError
	if !errors.As(err, &he) {
		t.Fatalf("%s: %q: %T %v, want an *apierr.HTTPError", schema, body, err, err)
	}
	if he.Status != http.StatusBadRequest || he.Body.Code != protocol.CodeInvalid || he.Body.Message == "" {
		t.Fatalf("%s: %q: %d %+v, want a 400 invalid_field with a message", schema, body, he.Status, he.Body)
	}
	field := he.Body.Field
	if json.Valid(body) && field == "" {
		t.Fatalf("%s: %q is one JSON value, refused without naming a field: %s", schema, body, he.Body.Message)
	}
	if (strings.HasPrefix(he.Body.Message, "must be ") || strings.HasPrefix(he.Body.Message, "must not hold a NUL") || strings.HasPrefix(he.Body.Message, "must be valid UTF-8")) && field != "(body)" && !isFieldPath(typ, field) {
		t.Fatalf("%s: %q: the field %q of %q is no field of the request", schema, body, field, he.Body.Message)
	}
}

// isFieldPath reports whether path ("windows.days", "set[1].name") names a
// field of typ by the JSON names, a map's keys being any name.
func isFieldPath(typ reflect.Type, path string) bool {
	for _, seg := range strings.Split(path, ".") {
		seg, _, _ = strings.Cut(seg, "[") // "chunks[2]": the list's items are checked below
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array {
			typ = typ.Elem()
		}
		switch typ.Kind() {
		case reflect.Map:
			typ = typ.Elem()
		case reflect.Struct:
			f, ok := jsonField(typ, seg)
			if !ok {
				return false
			}
			typ = f.Type
		default:
			return false
		}
	}
	return true
}

// jsonField finds the field of a struct (or of a struct it embeds) that
// JSON names name.
func jsonField(typ reflect.Type, name string) (reflect.StructField, bool) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && tag == "":
			if inner, ok := jsonField(f.Type, name); ok {
				return inner, true
			}
		case tag == name, tag == "" && f.IsExported() && f.Name == name:
			return f, true
		}
	}
	return reflect.StructField{}, false
}
