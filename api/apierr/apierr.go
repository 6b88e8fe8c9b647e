package apierr

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// HTTPError is an error with a status code and a protocol.Error body.
type HTTPError struct {
	Status int
	Body   protocol.Error
}

func (e *HTTPError) Error() string {
	if e.Body.Field != "" {
		return fmt.Sprintf("%d %s: %s", e.Status, e.Body.Field, e.Body.Message)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Body.Message)
}

// New returns an HTTPError.
func New(status int, code, field, format string, args ...any) *HTTPError {
	return &HTTPError{Status: status, Body: protocol.Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}}
}

// Invalid is a 400 about one field.
func Invalid(field, format string, args ...any) *HTTPError {
	return New(http.StatusBadRequest, protocol.CodeInvalid, field, format, args...)
}

// Bind decodes the request body as exactly one JSON object into v, refusing
// unknown fields, wrong types, values their type's UnmarshalJSON refuses (a
// bad time) and text that no text column stores (a NUL character, raw JSON
// that is not UTF-8) with a 400 that names the field. An empty body decodes
// as {}.
func Bind(c echo.Context, v any) error {
	body := c.Request().Body
	if body == nil {
		return nil
	}
	var read bytes.Buffer // what the decoder read: the value, when a field's own decoding fails
	dec := json.NewDecoder(io.TeeReader(body, &read))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return decodeError(err, reflect.TypeOf(v), read.Bytes())
	}
	if dec.More() {
		return Invalid("", "the body must hold exactly one JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Invalid("", "the body must hold exactly one JSON object")
	}
	if field, why, ok := badText(reflect.ValueOf(v), ""); ok {
		return Invalid(cmp.Or(field, "(body)"), "%s", why)
	}
	return nil
}

func decodeError(err error, typ reflect.Type, read []byte) error {
	var syntax *json.SyntaxError
	var wrong *json.UnmarshalTypeError
	var maxBytes *http.MaxBytesError
	switch {
	case errors.Is(err, echo.ErrStatusRequestEntityTooLarge):
		return New(http.StatusRequestEntityTooLarge, protocol.CodeTooLarge, "", "the body is larger than this route accepts")
	case errors.As(err, &maxBytes):
		return New(http.StatusRequestEntityTooLarge, protocol.CodeTooLarge, "", "the body is larger than %d bytes", maxBytes.Limit)
	case errors.As(err, &syntax):
		return Invalid("", "malformed JSON at byte %d: %v", syntax.Offset, err)
	case errors.As(err, &wrong):
		field := jsonPath(typ, wrong.Field)
		if field == "" {
			field = "(body)"
		}
		return Invalid(field, "must be %s, not %s", typeName(wrong.Type.Kind().String()), wrong.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		quoted := strings.TrimPrefix(err.Error(), "json: unknown field ")
		field, uerr := strconv.Unquote(quoted)
		if uerr != nil || field == "" {
			field = quoted // `""`: the empty key still names a field
		}
		return Invalid(field, "unknown field %s", quoted)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Invalid("", "malformed JSON: the body ends too early")
	}
	var first json.RawMessage
	if json.NewDecoder(bytes.NewReader(read)).Decode(&first) == nil {
		if field, ok := failingField(first, typ, ""); ok {
			return Invalid(cmp.Or(field, "(body)"), "%v", err)
		}
	}
	return Invalid("", "malformed JSON: %v", err)
}

func typeName(kind string) string {
	switch kind {
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "an object"
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "a number"
	case "bool":
		return "true or false"
	}
	return "a " + kind
}

// FromStore maps an error from the store (or anything else) to an HTTPError.
// Unknown errors become a 500 whose message hides the cause.
func FromStore(err error) *HTTPError {
	var he *HTTPError
	var fe *store.FieldError
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &fe):
		if strings.Contains(fe.Message, store.ErrTooLarge.Error()) {
			return New(http.StatusRequestEntityTooLarge, protocol.CodeTooLarge, fe.Field, "%s", fe.Message)
		}
		return Invalid(fe.Field, "%s", fe.Message)
	case errors.Is(err, store.ErrNotFound):
		return New(http.StatusNotFound, protocol.CodeNotFound, "", "%s", trimPrefixes(err))
	case errors.Is(err, store.ErrStaleAttempt):
		return New(http.StatusConflict, protocol.CodeStaleAttempt, "attempt", "%s", trimPrefixes(err))
	case errors.Is(err, store.ErrConflict):
		return New(http.StatusConflict, protocol.CodeConflict, "", "%s", trimPrefixes(err))
	case errors.Is(err, store.ErrUnauthorized):
		return New(http.StatusUnauthorized, protocol.CodeUnauthorized, "", "missing, invalid or revoked token")
	}
	return New(http.StatusInternalServerError, "internal", "", "internal error")
}

// trimPrefixes drops the "create install: " style call-path prefixes that
// wrapping adds, keeping the specific part.
func trimPrefixes(err error) string {
	msg := err.Error()
	for _, p := range []string{"create install: ", "create component: ", "create app: ", "create action run: ", "claim job: ", "heartbeat: ", "complete job: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

// Resolve is the answer Handler sends for err: echo's own errors (unknown
// route, 405, 413) keep their status, the rest go through FromStore.
func Resolve(err error) *HTTPError {
	var ee *echo.HTTPError
	if !errors.As(err, &ee) {
		return FromStore(err)
	}
	code := "http_error"
	if ee.Code == http.StatusNotFound {
		code = protocol.CodeNotFound
	}
	if ee.Code == http.StatusRequestEntityTooLarge {
		code = protocol.CodeTooLarge
	}
	return New(ee.Code, code, "", "%v", ee.Message)
}

// Handler is echo's HTTPErrorHandler for both surfaces: every error answers
// JSON. 5xx causes are logged, never sent.
func Handler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		if errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil {
			return // the client went away (a long poll or held heartbeat it ended): nobody to answer
		}
		he := Resolve(err)
		if he.Status >= 500 {
			log.Error("request failed", "method", c.Request().Method, "path", c.Path(), "err", err)
		}
		if c.Request().Method == http.MethodHead {
			c.NoContent(he.Status)
			return
		}
		c.JSON(he.Status, he.Body)
	}
}
