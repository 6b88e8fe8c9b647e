package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CompileSchema compiles the JSON Schema in file; ref ("" or "#/$defs/x")
// picks a part of it.
func CompileSchema(t testing.TB, file, ref string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(file)
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name + ref)
	if err != nil {
		t.Fatalf("compile %s%s: %v", file, ref, err)
	}
	return s
}
