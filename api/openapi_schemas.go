package api

import (
	"fmt"
	"reflect"

	"github.com/swaggest/jsonschema-go"

	"github.com/outpost-dev/outpost/api/wire"
)

// schemaOptions make the reflected schemas the document's: named after
// their Go types, described by the wire types' doc comments, null only
// where a field says nullable:"true", and no $ref with siblings (a
// described or nullable reference is an allOf of one).
func schemaOptions() []func(*jsonschema.ReflectContext) {
	named := map[string]reflect.Type{}
	return []func(*jsonschema.ReflectContext){
		jsonschema.InterceptDefName(func(t reflect.Type, def string) string {
			if t.Name() == "" {
				return def
			}
			if other, ok := named[t.Name()]; ok && other != t {
				panic(fmt.Sprintf("api: the OpenAPI schemas of %s and %s would share the name %s", other, t, t.Name()))
			}
			named[t.Name()] = t
			return t.Name()
		}),
		jsonschema.InterceptSchema(func(p jsonschema.InterceptSchemaParams) (bool, error) {
			if !p.Processed {
				return false, nil
			}
			if doc := wire.TypeDoc(p.Value.Type()); doc != "" {
				p.Schema.WithDescription(doc)
			}
			if p.Schema.HasType(jsonschema.Integer) {
				p.Schema.Format = nil // int and int64 alike: JSON has one kind of integer
			}
			return false, nil
		}),
		jsonschema.InterceptProp(func(p jsonschema.InterceptPropParams) error {
			if !p.Processed {
				return nil
			}
			s := p.PropertySchema
			nullable := p.Field.Tag.Get("nullable") == "true"
			if !nullable {
				s.RemoveType(jsonschema.Null)
			}
			if doc := wire.FieldDoc(p.ParentSchema.ReflectType, p.Field); doc != "" {
				s.WithDescription(doc)
			}
			if s.Ref != nil && (s.Description != nil || nullable) {
				ref := jsonschema.Schema{Ref: s.Ref}
				s.Ref = nil
				s.AllOf = []jsonschema.SchemaOrBool{ref.ToSchemaOrBool()}
				if nullable {
					s.AddType(jsonschema.Null)
				}
			}
			return nil
		}),
	}
}
