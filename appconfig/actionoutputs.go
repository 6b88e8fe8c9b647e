package appconfig

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// ActionOutputs are the outputs of an install's latest succeeded run of an
// action, as templates read them (.actions.<action>.outputs.<name>).
type ActionOutputs struct {
	// RunID is the run they come from, for messages.
	RunID string
	// Outputs, each sensitive when the step sealed it or the action lists it
	// in sensitive_outputs.
	Outputs map[string]Value
}

// ActionsRead lists, sorted, the actions whose outputs the config's
// templates (the sandbox's, components' and actions') read: what Data.Actions
// must hold for them to render.
func (c *Config) ActionsRead() []string {
	return sortedKeys(c.readsActions)
}

// markBadActions records the actions whose file is there but could not be
// read (its TOML, its name): references to them are not checked, that would
// only repeat the problem.
func (c *Config) markBadActions() {
	c.badActions = map[string]bool{}
	entries, _ := fs.ReadDir(c.fsys, ActionsDir)
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".toml")
		if _, loaded := c.Action(name); ok && !e.IsDir() && !loaded {
			c.badActions[name] = true
		}
	}
}

// actionOutput reads an action output for renderString, and what is wrong
// when it cannot: the action never succeeded on the install, or its run
// wrote no such output.
func (c *Config) actionOutput(d Data, r ref) (Value, string) {
	ao, ran := d.Actions[r.action]
	if !ran {
		return Value{}, fmt.Sprintf("action %q has never run successfully on this install: run it (outpostctl actions run INSTALL %s) before this is deployed",
			r.action, r.action)
	}
	v, ok := ao.Outputs[r.name]
	if !ok {
		return Value{}, fmt.Sprintf("the latest successful run of action %q (%s) wrote no output %q (outputs: %s)",
			r.action, ao.RunID, r.name, quotedList(sortedKeys(ao.Outputs)))
	}
	if a, ok := c.Action(r.action); ok && slices.Contains(a.SensitiveOutputs, r.name) {
		v.Sensitive = true
	}
	return v, ""
}
