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

// FieldDoc is the doc comment of struct t's field named field (its Go name),
// found in t or in a struct t embeds.
func FieldDoc(t reflect.Type, field string) string {
	t = deref(t)
	if t.Kind() != reflect.Struct {
		return ""
	}
	f, ok := t.FieldByName(field)
	if !ok {
		return ""
	}
	owner := t
	for _, i := range f.Index[:len(f.Index)-1] {
		owner = deref(owner.Field(i).Type)
	}
	if owner.PkgPath() != pkgPath {
		return ""
	}
	return docs[owner.Name()+"."+field]
}

var pkgPath = reflect.TypeFor[Error]().PkgPath()

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
