package apierr

import (
	"fmt"
	"reflect"
	"strings"
)

// nulField finds a string in v (a decoded body) that holds a NUL character,
// which PostgreSQL's text cannot store, and returns its field path
// ("chunks[2].data", "labels.env"); "" when there is none. A map key holding
// one is named by the map's field.
func nulField(v reflect.Value, path string) (string, bool) {
	switch v.Kind() {
	case reflect.String:
		return path, strings.ContainsRune(v.String(), 0)
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nulField(v.Elem(), path)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", false // bytes and raw JSON: escaped wherever they are stored
		}
		for i := range v.Len() {
			if p, ok := nulField(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := fmt.Sprint(iter.Key().Interface())
			if strings.ContainsRune(k, 0) {
				return path, true
			}
			if p, ok := nulField(iter.Value(), joinField(path, k)); ok {
				return p, true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case f.Anonymous && name == "":
				if p, ok := nulField(v.Field(i), path); ok { // its fields are the outer struct's
					return p, true
				}
				continue
			case name == "-" || !f.IsExported():
				continue
			case name == "":
				name = f.Name
			}
			if p, ok := nulField(v.Field(i), joinField(path, name)); ok {
				return p, true
			}
		}
	}
	return "", false
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
