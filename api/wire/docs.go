package wire

import "reflect"

// TypeDoc is the doc comment of a type of this package, as one paragraph
// ("" for a type of another package, or one without).
func TypeDoc(t reflect.Type) string {
	t = deref(t)
	if t.PkgPath() != pkgPath {
		return ""
	}
	return docs[t.Name()]
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
			if t.PkgPath() != pkgPath {
				return ""
			}
			return docs[t.Name()+"."+f.Name]
		}
		if g.Anonymous {
			if doc := FieldDoc(g.Type, f); doc != "" {
				return doc
			}
		}
	}
	return ""
}

var pkgPath = reflect.TypeFor[Error]().PkgPath()

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
