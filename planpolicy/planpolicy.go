package planpolicy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/outpost-dev/outpost/protocol"
)

// Rules a policy may define; any other rule is its own helper.
const (
	RuleDeny = "deny"
	RuleWarn = "warn"
)

// Problem is one reason a module is not a valid policy, with its place.
type Problem struct {
	File    string
	Line    int
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return p.File + ": " + p.Message
}

// Problems are every problem Parse found; as an error it says them all.
type Problems []Problem

func (ps Problems) Error() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}

// Set is one source's policies, compiled and ready to evaluate.
type Set struct {
	source   string
	policies []policy
}

// policy is one package and its prepared queries.
type policy struct {
	name, file string
	rules      map[string]rego.PreparedEvalQuery // RuleDeny/RuleWarn → data.<pkg>.<rule>
}

// Parse checks modules as Compile would, and returns Problems naming each
// file and line that is wrong (nil when they are all valid policies).
func Parse(modules []protocol.PolicyModule) error {
	_, err := compile(modules)
	return err
}

// Compile parses and compiles one source's modules and prepares their
// queries. Its error is Problems.
func Compile(ctx context.Context, source string, modules []protocol.PolicyModule) (*Set, error) {
	c, err := compile(modules)
	if err != nil {
		return nil, err
	}
	s := &Set{source: source}
	for _, pkg := range packages(c) {
		p := policy{name: pkg.name, file: pkg.file, rules: map[string]rego.PreparedEvalQuery{}}
		for _, rule := range pkg.rules {
			q, err := rego.New(rego.Compiler(c), rego.Capabilities(capabilities), rego.StrictBuiltinErrors(true),
				rego.Query("data."+pkg.name+"."+rule)).PrepareForEval(ctx)
			if err != nil {
				return nil, Problems{{File: pkg.file, Message: fmt.Sprintf("%s: %v", rule, err)}}
			}
			p.rules[rule] = q
		}
		s.policies = append(s.policies, p)
	}
	return s, nil
}

// Len is how many policies the set holds.
func (s *Set) Len() int { return len(s.policies) }

// Eval evaluates every policy of the set on input (a JSON-shaped value), one
// result a policy, in the order of their names. A policy that fails to
// evaluate has Error set: it did not pass.
func (s *Set) Eval(ctx context.Context, input any) []protocol.PolicyResult {
	parsed, err := ast.InterfaceToValue(input)
	return s.eval(ctx, parsed, err)
}

func (s *Set) eval(ctx context.Context, input ast.Value, inputErr error) []protocol.PolicyResult {
	out := make([]protocol.PolicyResult, 0, len(s.policies))
	for _, p := range s.policies {
		r := protocol.PolicyResult{Source: s.source, Policy: p.name, File: p.file}
		if inputErr != nil {
			r.Error = fmt.Sprintf("input: %v", inputErr)
		} else {
			r.Deny, r.Warn, r.Error = p.eval(ctx, input)
		}
		out = append(out, r)
	}
	return out
}

func (p policy) eval(ctx context.Context, input ast.Value) (deny, warn []string, errText string) {
	var errs []error
	for rule, q := range p.rules {
		msgs, err := messages(ctx, q, input)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rule, err))
		}
		if rule == RuleDeny {
			deny = msgs
		} else {
			warn = msgs
		}
	}
	if err := errors.Join(errs...); err != nil {
		errText = err.Error()
	}
	return deny, warn, errText
}

// messages evaluates a deny or warn rule: a set (or array) of strings, or
// of objects with a "msg" string. An undefined rule says nothing.
func messages(ctx context.Context, q rego.PreparedEvalQuery, input ast.Value) ([]string, error) {
	rs, err := q.Eval(ctx, rego.EvalParsedInput(input))
	if err != nil || len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, err
	}
	var items []any
	switch v := rs[0].Expressions[0].Value.(type) {
	case []any:
		items = v
	case bool:
		if v {
			return []string{"(no message)"}, nil
		}
		return nil, nil
	default:
		return nil, fmt.Errorf("must be a set of messages, not %T", v)
	}
	msgs := make([]string, 0, len(items))
	for _, it := range items {
		switch m := it.(type) {
		case string:
			msgs = append(msgs, m)
		case map[string]any:
			if s, ok := m["msg"].(string); ok {
				msgs = append(msgs, s)
				continue
			}
			return nil, errors.New(`a message object must have a "msg" string`)
		default:
			return nil, fmt.Errorf("a message must be a string or an object with \"msg\", not %T", it)
		}
	}
	slices.Sort(msgs)
	return msgs, nil
}
