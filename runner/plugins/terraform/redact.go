package terraform

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Redacted replaces a sensitive value in the plan's JSON.
const Redacted = "(sensitive value)"

// redactPlanJSON replaces every value terraform marks sensitive in `show -json` of a plan (sensitive
// root variables, attributes under the *_sensitive and sensitive_values masks, sensitive outputs)
// in resource_changes, resource_drift, output_changes, planned_values and prior_state.
func redactPlanJSON(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var plan map[string]any
	if err := dec.Decode(&plan); err != nil {
		return nil, fmt.Errorf("reading the plan's JSON: %w", err)
	}

	// Root variables declared sensitive: their values and defaults.
	vars, _ := plan["variables"].(map[string]any)
	declared := object(plan, "configuration", "root_module", "variables")
	for name, d := range declared {
		decl, _ := d.(map[string]any)
		if sensitive, _ := decl["sensitive"].(bool); !sensitive {
			continue
		}
		if _, ok := decl["default"]; ok {
			decl["default"] = Redacted
		}
		if vm, ok := vars[name].(map[string]any); ok {
			vm["value"] = Redacted
		}
	}

	for _, key := range []string{"resource_changes", "resource_drift"} {
		changes, _ := plan[key].([]any)
		for _, c := range changes {
			cm, _ := c.(map[string]any)
			redactChange(object(cm, "change"))
		}
	}
	for _, c := range object(plan, "output_changes") {
		cm, _ := c.(map[string]any)
		redactChange(cm)
	}

	redactValues(object(plan, "planned_values"))
	redactValues(object(plan, "prior_state", "values"))
	return json.Marshal(plan)
}

// object walks nested objects; a missing one is nil.
func object(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		if m == nil {
			return nil
		}
		m, _ = m[k].(map[string]any)
	}
	return m
}

// redactChange redacts a change's before and after with its masks.
func redactChange(change map[string]any) {
	if change == nil {
		return
	}
	for _, side := range []string{"before", "after"} {
		if mask, ok := change[side+"_sensitive"]; ok {
			change[side] = applyMask(change[side], mask)
		}
	}
}

// redactValues redacts a values representation (planned_values, a state's
// values): its outputs and, module by module, its resources.
func redactValues(values map[string]any) {
	if values == nil {
		return
	}
	for _, o := range object(values, "outputs") {
		om, _ := o.(map[string]any)
		if sensitive, _ := om["sensitive"].(bool); sensitive {
			om["value"] = Redacted
		}
	}
	redactModule(object(values, "root_module"))
}

func redactModule(module map[string]any) {
	if module == nil {
		return
	}
	resources, _ := module["resources"].([]any)
	for _, r := range resources {
		rm, _ := r.(map[string]any)
		if mask, ok := rm["sensitive_values"]; ok {
			rm["values"] = applyMask(rm["values"], mask)
		}
	}
	children, _ := module["child_modules"].([]any)
	for _, c := range children {
		cm, _ := c.(map[string]any)
		redactModule(cm)
	}
}

// applyMask replaces the parts of v that mask marks true. A mask mirrors
// the value: true for a sensitive value, an object or a list for one with
// sensitive parts.
func applyMask(v, mask any) any {
	switch m := mask.(type) {
	case bool:
		if m && v != nil {
			return Redacted
		}
	case map[string]any:
		if vm, ok := v.(map[string]any); ok {
			for k, sub := range m {
				if _, present := vm[k]; present {
					vm[k] = applyMask(vm[k], sub)
				}
			}
		}
	case []any:
		if vl, ok := v.([]any); ok {
			for i := range min(len(vl), len(m)) {
				vl[i] = applyMask(vl[i], m[i])
			}
		}
	}
	return v
}
