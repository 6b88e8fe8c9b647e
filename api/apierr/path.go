package apierr

import (
	"reflect"
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
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && tag == "":
			if t := fieldType(f.Type, name); t != nil {
				return t
			}
		case tag == name, tag == "" && f.Name == name:
			return f.Type
		}
	}
	return nil
}
