package appconfig

import "slices"

// named is what a config holds in a list by name: a component, an input,
// an action, a runbook.
type named interface{ nameOf() string }

func (c *Component) nameOf() string { return c.Name }
func (in Input) nameOf() string     { return in.Name }
func (a *Action) nameOf() string    { return a.Name }
func (r *Runbook) nameOf() string   { return r.Name }

// byName returns the element of list named name.
func byName[T named](list []T, name string) (T, bool) {
	i := slices.IndexFunc(list, func(v T) bool { return v.nameOf() == name })
	if i < 0 {
		var zero T
		return zero, false
	}
	return list[i], true
}

// namesOf lists the names of list's elements, in its order.
func namesOf[T named](list []T) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = v.nameOf()
	}
	return out
}
