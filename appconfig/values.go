package appconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/outpost-dev/outpost/protocol"
)

// Input types.
const (
	InputString = "string"
	InputNumber = "number"
	InputBool   = "bool"
	InputList   = "list"
	InputMap    = "map"
)

// InputTypes are the types an input may have.
var InputTypes = []string{InputString, InputNumber, InputBool, InputList, InputMap}

// Value is a value templates can use: an install input or a module output,
// in its JSON form (nil, bool, json.Number, string, []any or map[string]any),
// and whether it is sensitive.
type Value struct {
	Value     any  `json:"value"`
	Sensitive bool `json:"sensitive,omitempty"`
}

// normalize turns a decoded TOML value into its JSON form.
func normalize(v any) any {
	switch x := v.(type) {
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case float64:
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}

// jsonType names the input type of a value in JSON form ("null" for nil).
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return InputString
	case json.Number:
		return InputNumber
	case bool:
		return InputBool
	case []any:
		return InputList
	case map[string]any:
		return InputMap
	}
	return fmt.Sprintf("%T", v)
}

// zeroValue is the value of an optional input that has no default and is not
// given.
func zeroValue(typ string) any {
	switch typ {
	case InputNumber:
		return json.Number("0")
	case InputBool:
		return false
	case InputList:
		return []any{}
	case InputMap:
		return map[string]any{}
	}
	return ""
}

// decodeJSON decodes data keeping numbers exact (json.Number).
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// ParseInput reads an install's value for an input of the given type, as the
// API and the store keep it: a string as is, a number or bool as its text,
// a list or map as JSON.
func ParseInput(typ, s string) (any, error) {
	switch typ {
	case InputString:
		return s, nil
	case InputNumber:
		v, err := decodeJSON([]byte(strings.TrimSpace(s)))
		if _, ok := v.(json.Number); err != nil || !ok {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return v, nil
	case InputBool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	case InputList, InputMap:
		v, err := decodeJSON([]byte(s))
		if err != nil || jsonType(v) != typ {
			return nil, fmt.Errorf("must be a %s in JSON (e.g. %s)", typ, map[string]string{InputList: `["a", "b"]`, InputMap: `{"k": "v"}`}[typ])
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown input type %q", typ)
}

// ResolveInputs turns the values an install gives (name → value as
// ParseInput reads it) into the values templates see: every declared input,
// with its default, or its type's zero value ("", 0, false, [], {}) when it
// is optional, has no default and is not given. Sensitive says which are
// sensitive besides those the config declares so (e.g. the install marked
// them); it may be nil.
//
// The error is Problems with keys "inputs.<name>": a required input not
// given, a value of the wrong type. Values given for inputs the config does
// not declare are ignored.
func (c *Config) ResolveInputs(given map[string]string, sensitive map[string]bool) (map[string]Value, error) {
	var ps problems
	out := make(map[string]Value, len(c.Inputs))
	for _, in := range c.Inputs {
		if v, ok := in.resolve(&ps, given); ok {
			out[in.Name] = Value{Value: v, Sensitive: in.Sensitive || sensitive[in.Name]}
		}
	}
	return out, ps.err()
}

// resolve is the input's value in given (name → value as ParseInput reads
// it): parsed, else its default, else its type's zero value when optional.
// A value of the wrong type or a required input not given is a problem
// (false).
func (in Input) resolve(ps *problems, given map[string]string) (any, bool) {
	s, ok := given[in.Name]
	switch {
	case ok:
		v, err := ParseInput(in.Type, s)
		if err != nil {
			ps.add("", "inputs."+in.Name, "input %q (%s): %v", in.Name, in.Type, err)
			return nil, false
		}
		return v, true
	case in.Required:
		ps.add("", "inputs."+in.Name, "input %q is required", in.Name)
		return nil, false
	case in.Default != nil:
		return in.Default, true
	}
	return zeroValue(in.Type), true
}

// OutputValues turns a terraform job's outputs into the values templates
// see.
func OutputValues(outs map[string]protocol.TerraformOutput) (map[string]Value, error) {
	res := make(map[string]Value, len(outs))
	for _, name := range sortedKeys(outs) {
		o := outs[name]
		v, err := decodeJSON(o.Value)
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", name, err)
		}
		res[name] = Value{Value: v, Sensitive: o.Sensitive}
	}
	return res, nil
}

// InputNames lists the declared inputs' names, in file order.
func (c *Config) InputNames() []string {
	return namesOf(c.Inputs)
}

func quotedList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := slices.Clone(names)
	for i, n := range q {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
