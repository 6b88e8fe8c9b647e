package apierr

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// jsonPath drops from a field path that encoding/json reports
// ("releasePacing.batch_size") the names of embedded structs, which are Go's
// and not the request's: "batch_size".
func jsonPath(typ reflect.Type, path string) string {
	var out []string
	for _, seg := range strings.Split(path, ".") {
		for typ != nil && (typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map) {
			typ = typ.Elem()
		}
		if typ == nil || typ.Kind() != reflect.Struct {
			out, typ = append(out, seg), nil
			continue
		}
		if f, ok := typ.FieldByName(seg); ok && f.Anonymous && f.Tag.Get("json") == "" {
			typ = f.Type // an embedded struct: its fields come next, under no name of their own
			continue
		}
		out = append(out, seg)
		typ = fieldType(typ, seg)
	}
	return strings.Join(out, ".")
}

// fieldType is the type of the field JSON names name in struct typ (or in a
// struct it embeds), or nil.
func fieldType(typ reflect.Type, name string) reflect.Type {
	var found reflect.Type
	eachJSONField(typ, func(n string, t reflect.Type) {
		if found == nil && n == name {
			found = t
		}
	})
	return found
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// failingField finds, in raw (a JSON value for typ), the field whose own
// decoding fails: a type's UnmarshalJSON (time.Time's), whose error
// encoding/json does not place.
func failingField(raw json.RawMessage, typ reflect.Type, path string) (string, bool) {
	if reflect.PointerTo(typ).Implements(unmarshaler) {
		return path, json.Unmarshal(raw, reflect.New(typ).Interface()) != nil
	}
	switch typ.Kind() {
	case reflect.Pointer:
		return failingField(raw, typ.Elem(), path)
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return "", false
		}
		for i, item := range items {
			if p, ok := failingField(item, typ.Elem(), fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
	case reflect.Map, reflect.Struct:
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil {
			return "", false
		}
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			ft := typ.Elem
			if typ.Kind() == reflect.Struct {
				ft = func() reflect.Type { return fieldTypeFold(typ, k) }
			}
			if t := ft(); t != nil {
				if p, ok := failingField(fields[k], t, joinField(path, k)); ok {
					return p, true
				}
			}
		}
	}
	return "", false
}

// fieldTypeFold is fieldType, matching the name as encoding/json does: exactly,
// or else without regard to case.
func fieldTypeFold(typ reflect.Type, name string) reflect.Type {
	if t := fieldType(typ, name); t != nil {
		return t
	}
	var found reflect.Type
	eachJSONField(typ, func(n string, t reflect.Type) {
		if found == nil && strings.EqualFold(n, name) {
			found = t
		}
	})
	return found
}

// eachJSONField calls f with each field of struct typ by its JSON name, those
// of embedded structs included.
func eachJSONField(typ reflect.Type, f func(name string, t reflect.Type)) {
	for i := range typ.NumField() {
		sf := typ.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		switch {
		case sf.Anonymous && tag == "":
			eachJSONField(sf.Type, f)
		case tag == "-" || !sf.IsExported():
		case tag == "":
			f(sf.Name, sf.Type)
		default:
			f(tag, sf.Type)
		}
	}
}
