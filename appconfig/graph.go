package appconfig

import (
	"fmt"
	"slices"
	"strings"
)

// Graph maps each component to the components it depends on. It is plain
// data (it marshals to JSON), so an activity can hand it to a workflow.
// Every method is deterministic: ties are broken by name.
type Graph map[string][]string

func (g Graph) clone() Graph {
	out := make(Graph, len(g))
	for k, v := range g {
		out[k] = slices.Clone(v)
	}
	return out
}

// Levels groups the components for deployment: level 0 depends on nothing,
// each later level only on earlier ones (each is placed as early as it can
// be). The components of one level can deploy in parallel. Each level is
// sorted by name. A cycle is an error naming it.
func (g Graph) Levels() ([][]string, error) {
	if cycles := g.Cycles(); len(cycles) > 0 {
		return nil, fmt.Errorf("appconfig: dependency cycle %s", strings.Join(cycles[0], " → "))
	}
	for _, name := range sortedKeys(g) {
		for _, dep := range g[name] {
			if _, ok := g[dep]; !ok {
				return nil, fmt.Errorf("appconfig: %s depends on %s, which is not in the graph", name, dep)
			}
		}
	}
	level := map[string]int{}
	var depth func(string) int
	depth = func(n string) int {
		if l, ok := level[n]; ok {
			return l
		}
		l := 0
		for _, dep := range g[n] {
			l = max(l, depth(dep)+1)
		}
		level[n] = l
		return l
	}
	var out [][]string
	for _, name := range sortedKeys(g) {
		l := depth(name)
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], name)
	}
	return out, nil
}

// Order is a deployment order: every component after its dependencies
// (Levels, flattened).
func (g Graph) Order() ([]string, error) {
	levels, err := g.Levels()
	return slices.Concat(levels...), err
}

// TeardownLevels groups the components for teardown: a component is torn
// down only after every component that depends on it (the Levels of the
// reversed graph).
func (g Graph) TeardownLevels() ([][]string, error) {
	return g.Reverse().Levels()
}

// TeardownOrder is a teardown order: every component before its
// dependencies.
func (g Graph) TeardownOrder() ([]string, error) {
	levels, err := g.TeardownLevels()
	return slices.Concat(levels...), err
}

// Reverse maps each component to the components that depend on it
// directly.
func (g Graph) Reverse() Graph {
	out := make(Graph, len(g))
	for name := range g {
		out[name] = []string{}
	}
	for _, name := range sortedKeys(g) {
		for _, dep := range g[name] {
			out[dep] = append(out[dep], name)
		}
	}
	return out
}

// Dependents lists the components that depend on name, directly or not,
// sorted.
func (g Graph) Dependents(name string) []string {
	return g.Reverse().reachable(name)
}

// Requires lists the components name depends on, directly or not, sorted.
func (g Graph) Requires(name string) []string {
	return g.reachable(name)
}

func (g Graph) reachable(from string) []string {
	seen := map[string]bool{}
	stack := slices.Clone(g[from])
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		stack = append(stack, g[n]...)
	}
	delete(seen, from)
	return sortedKeys(seen)
}

// Cycles returns the dependency cycles a depth-first search meets, each as
// a path that starts and ends with the same component ("a", "b", "a"),
// rotated to start at its smallest name. Nil means there is none.
func (g Graph) Cycles() [][]string {
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var out [][]string
	found := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		state[n] = active
		stack = append(stack, n)
		deps := slices.Clone(g[n])
		slices.Sort(deps)
		for _, d := range deps {
			switch state[d] {
			case unseen:
				if _, ok := g[d]; ok {
					visit(d)
				}
			case active:
				i := slices.Index(stack, d)
				cycle := rotate(stack[i:])
				if k := strings.Join(cycle, "\x00"); !found[k] {
					found[k] = true
					out = append(out, append(cycle, cycle[0]))
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
	}
	for _, n := range sortedKeys(g) {
		if state[n] == unseen {
			visit(n)
		}
	}
	return out
}

// rotate returns a copy of cycle starting at its smallest element.
func rotate(cycle []string) []string {
	i := slices.Index(cycle, slices.Min(cycle))
	return append(slices.Clone(cycle[i:]), cycle[:i]...)
}
