package apierr

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Why badText refuses a field.
const (
	nulReason  = "must not hold a NUL character (\\u0000)"
	utf8Reason = "must be valid UTF-8 JSON"
)

// badText finds text in v (a decoded body) that no PostgreSQL text column
// stores: a string holding a NUL character, raw JSON that is not UTF-8
// (encoding/json passes it through). It returns the field's path
// ("chunks[2].data", "labels.env") and why. A map key holding a NUL is named
// by the map's field.
func badText(v reflect.Value, path string) (string, string, bool) {
	switch v.Kind() {
	case reflect.String:
		return path, nulReason, strings.ContainsRune(v.String(), 0)
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return badText(v.Elem(), path)
		}
	case reflect.Slice, reflect.Array:
		if v.Type() == rawJSON {
			return path, utf8Reason, !utf8.Valid(v.Bytes())
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", "", false // bytes: base64 wherever they are stored
		}
		for i := range v.Len() {
			if p, why, ok := badText(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, why, true
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := fmt.Sprint(iter.Key().Interface())
			if strings.ContainsRune(k, 0) {
				return path, nulReason, true
			}
			if p, why, ok := badText(iter.Value(), joinField(path, k)); ok {
				return p, why, true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case f.Anonymous && name == "":
				if p, why, ok := badText(v.Field(i), path); ok { // its fields are the outer struct's
					return p, why, true
				}
				continue
			case name == "-" || !f.IsExported():
				continue
			case name == "":
				name = f.Name
			}
			if p, why, ok := badText(v.Field(i), joinField(path, name)); ok {
				return p, why, true
			}
		}
	}
	return "", "", false
}

var rawJSON = reflect.TypeFor[json.RawMessage]()

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
