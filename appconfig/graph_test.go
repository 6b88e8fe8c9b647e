package appconfig

import (
	"reflect"
	"strings"
	"testing"
)

func TestGraphOrders(t *testing.T) {
	// A diamond (net → db, cache → api), a chain hanging off db (db → jobs
	// → report) and a loner.
	g := Graph{
		"net": {}, "db": {"net"}, "cache": {"net"}, "api": {"cache", "db"},
		"jobs": {"db"}, "report": {"jobs"}, "alone": {},
	}
	levels, err := g.Levels()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"alone", "net"}, {"cache", "db"}, {"api", "jobs"}, {"report"}}
	if !reflect.DeepEqual(levels, want) {
		t.Errorf("levels = %v, want %v", levels, want)
	}
	order, _ := g.Order()
	if want := []string{"alone", "net", "cache", "db", "api", "jobs", "report"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order = %v, want %v", order, want)
	}
	down, _ := g.TeardownLevels()
	if want := [][]string{{"alone", "api", "report"}, {"cache", "jobs"}, {"db"}, {"net"}}; !reflect.DeepEqual(down, want) {
		t.Errorf("teardown levels = %v, want %v", down, want)
	}
	// Teardown order: every component before what it depends on.
	td, _ := g.TeardownOrder()
	pos := map[string]int{}
	for i, n := range td {
		pos[n] = i
	}
	for n, deps := range g {
		for _, d := range deps {
			if pos[n] > pos[d] {
				t.Errorf("teardown order %v: %s comes after its dependency %s", td, n, d)
			}
		}
	}
	if got := g.Dependents("db"); !reflect.DeepEqual(got, []string{"api", "jobs", "report"}) {
		t.Errorf("dependents of db = %v", got)
	}
	if got := g.Requires("api"); !reflect.DeepEqual(got, []string{"cache", "db", "net"}) {
		t.Errorf("api requires %v", got)
	}
	if got := g.Reverse()["net"]; !reflect.DeepEqual(got, []string{"cache", "db"}) {
		t.Errorf("reverse of net = %v", got)
	}
}

func TestGraphCycles(t *testing.T) {
	g := Graph{"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d2"}, "d2": {"d"}, "e": {"a"}}
	cycles := g.Cycles()
	want := [][]string{{"a", "b", "c", "a"}, {"d", "d2", "d"}}
	if !reflect.DeepEqual(cycles, want) {
		t.Fatalf("cycles = %v, want %v", cycles, want)
	}
	if _, err := g.Levels(); err == nil || !strings.Contains(err.Error(), "a → b → c → a") {
		t.Fatalf("levels of a cyclic graph: %v", err)
	}
	if (Graph{"a": {"b"}, "b": {}}).Cycles() != nil {
		t.Fatal("cycle found in an acyclic graph")
	}
}

// TestCycleNamedFromConfig: a cycle through a declared dependency and a
// template reference is named with both, starting from the smallest name.
func TestCycleNamedFromConfig(t *testing.T) {
	files := base()
	files["modules/c/main.tf"] = file("variable \"x\" {\n  default = \"\"\n}\noutput \"o\" { value = 1 }\n")
	files["components/a.toml"] = file("name = \"a\"\ntype = \"terraform_module\"\nsource = \"modules/c\"\ndependencies = [\"b\"]\n")
	files["components/b.toml"] = file("name = \"b\"\ntype = \"terraform_module\"\nsource = \"modules/c\"\n[variables]\nx = \"{{ .components.c.outputs.o }}\"\n")
	files["components/c.toml"] = file("name = \"c\"\ntype = \"terraform_module\"\nsource = \"modules/c\"\ndependencies = [\"a\"]\n")
	ps := problemsOf(t, files)
	want := Problems{{"components/a.toml", "dependencies",
		"dependency cycle a → b → c → a (a → b: dependencies; b → c: template in variables.x; c → a: dependencies)"}}
	if !reflect.DeepEqual(ps, want) {
		t.Fatalf("problems:\n%v\nwant\n%v", ps, want)
	}
}
