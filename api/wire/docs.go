package wire

import (
	"reflect"

	"github.com/outpost-dev/outpost/protocol"
)

// TypeDoc is the doc comment of a type of this package, or of a protocol
// type it names as its own (type X = protocol.X), as one paragraph ("" for
// another type, or one without).
func TypeDoc(t reflect.Type) string {
	t = deref(t)
	key, ok := docKey(t)
	if !ok {
		return ""
	}
	return docs[key]
}

// FieldDoc is the doc comment of field f as reflected from struct t: a
// field of t, or of a struct t embeds (the one declared with f's name and
// tag).
func FieldDoc(t reflect.Type, f reflect.StructField) string {
	t = deref(t)
	if t.Kind() != reflect.Struct {
		return ""
	}
	for i := range t.NumField() {
		g := t.Field(i)
		if g.Name == f.Name && g.Tag == f.Tag && !g.Anonymous {
			key, ok := docKey(t)
			if !ok {
				return ""
			}
			return docs[key+"."+f.Name]
		}
		if g.Anonymous {
			if doc := FieldDoc(g.Type, f); doc != "" {
				return doc
			}
		}
	}
	return ""
}

var (
	pkgPath      = reflect.TypeFor[Error]().PkgPath()
	protocolPath = reflect.TypeFor[protocol.Job]().PkgPath()
)

// docKey is t's key in docs: its name for a type of this package,
// "protocol." and its name for a protocol type.
func docKey(t reflect.Type) (string, bool) {
	switch t.PkgPath() {
	case pkgPath:
		return t.Name(), true
	case protocolPath:
		return "protocol." + t.Name(), true
	}
	return "", false
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
