package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
)

// TestWireEnumsAreContractStatuses holds each status enum of a wire type
// (kept as literals: api/wire imports nothing) to contract/status: a status
// added there, and not here, fails.
func TestWireEnumsAreContractStatuses(t *testing.T) {
	statuses := statusConstants(t)
	for _, c := range []struct {
		v     any
		field string
		want  []string
		// subset: the answer takes some of the type's statuses only.
		subset bool
	}{
		{wire.Build{}, "Status", statuses["Build"], false},
		{wire.ConfigBuild{}, "Status", statuses["Build"], false},
		{wire.Job{}, "Status", statuses["Job"], false},
		{wire.Command{}, "Status", statuses["Job"], false},
		{wire.SupportBundle{}, "Status", statuses["Job"], true}, // a bundle is not lost: its workflow ends it
		{wire.Release{}, "Status", statuses["Release"], false},
		{wire.ReleaseInstall{}, "Status", statuses["ReleaseInstall"], false},
		{wire.RunnerUpdate{}, "Status", statuses["RunnerUpdate"], false},
		{wire.ApprovalMode{}, "ApprovalMode", statuses["Approval"], false},
		{wire.CreateComponentRequest{}, "Type", contract.ComponentTypes, false},
	} {
		typ := reflect.TypeOf(c.v)
		f, ok := typ.FieldByName(c.field)
		if !ok {
			t.Fatalf("wire.%s has no field %s", typ.Name(), c.field)
		}
		got := strings.Split(f.Tag.Get("enum"), ",")
		if len(c.want) == 0 {
			t.Fatalf("wire.%s.%s: no constants to compare with", typ.Name(), c.field)
		}
		for _, v := range got {
			if !slices.Contains(c.want, v) {
				t.Errorf("wire.%s.%s lists %q, which contract does not define (it has %v)", typ.Name(), c.field, v, c.want)
			}
		}
		if c.subset {
			continue
		}
		for _, v := range c.want {
			if !slices.Contains(got, v) {
				t.Errorf("wire.%s.%s does not list %q, which contract defines", typ.Name(), c.field, v)
			}
		}
	}
}

// statusConstants reads contract/status's string constants by their type's
// name, in declaration order.
func statusConstants(t *testing.T) map[string][]string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "../contract/status/status.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			typ, ok := vs.Type.(*ast.Ident)
			if !ok {
				continue
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[typ.Name] = append(out[typ.Name], s)
				}
			}
		}
	}
	return out
}
