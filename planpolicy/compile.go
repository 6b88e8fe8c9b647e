package planpolicy

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/outpost-dev/outpost/protocol"
)

// capabilities are OPA's, less the builtins that reach outside the plan: the
// network and the process's environment.
var capabilities = func() *ast.Capabilities {
	c := ast.CapabilitiesForThisVersion()
	c.Builtins = slices.DeleteFunc(c.Builtins, func(b *ast.Builtin) bool {
		return b.Name == "http.send" || b.Name == "net.lookup_ip_addr" || b.Name == "opa.runtime"
	})
	c.AllowNet = []string{}
	return c
}()

// pkg is one policy package: its dotted name, the first file declaring it,
// and which of deny and warn it defines.
type pkg struct {
	name, file string
	rules      []string
}

// compile parses (Rego v1) and compiles modules as one set.
func compile(modules []protocol.PolicyModule) (*ast.Compiler, error) {
	var ps Problems
	parsed := make(map[string]*ast.Module, len(modules))
	for _, m := range modules {
		mod, err := ast.ParseModuleWithOpts(m.File, m.Source, ast.ParserOptions{RegoVersion: ast.RegoV1, Capabilities: capabilities})
		if err != nil {
			ps = append(ps, problems(m.File, err)...)
			continue
		}
		if _, dup := parsed[m.File]; dup {
			ps = append(ps, Problem{File: m.File, Message: "given twice"})
		}
		parsed[m.File] = mod
	}
	if len(ps) > 0 {
		return nil, ps
	}
	c := ast.NewCompiler().WithCapabilities(capabilities).WithDefaultRegoVersion(ast.RegoV1)
	if c.Compile(parsed); c.Failed() {
		return nil, problems("", c.Errors)
	}
	return c, nil
}

// problems turns OPA's errors into Problems with their file and line.
func problems(file string, err error) Problems {
	var errs ast.Errors
	if !errors.As(err, &errs) {
		return Problems{{File: file, Message: err.Error()}}
	}
	ps := make(Problems, 0, len(errs))
	for _, e := range errs {
		p := Problem{File: file, Message: e.Message}
		if e.Location != nil {
			if e.Location.File != "" {
				p.File = e.Location.File
			}
			p.Line = e.Location.Row
		}
		ps = append(ps, p)
	}
	return ps
}

// packages lists the compiled packages that define deny or warn, by name.
func packages(c *ast.Compiler) []pkg {
	byName := map[string]*pkg{}
	for _, file := range slices.Sorted(maps.Keys(c.Modules)) {
		mod := c.Modules[file]
		name := strings.TrimPrefix(mod.Package.Path.String(), "data.")
		for _, r := range mod.Rules {
			rule := r.Head.Name.String()
			if len(r.Head.Reference) > 0 {
				rule = r.Head.Reference[0].Value.String()
			}
			if rule != RuleDeny && rule != RuleWarn {
				continue
			}
			p := byName[name]
			if p == nil {
				p = &pkg{name: name, file: file}
				byName[name] = p
			}
			if !slices.Contains(p.rules, rule) {
				p.rules = append(p.rules, rule)
			}
		}
	}
	out := make([]pkg, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[name])
	}
	return out
}

// ReadDir reads the *.rego files of dir (not its test files, *_test.rego),
// by name relative to dir, sub-directories included.
func ReadDir(dir string) ([]protocol.PolicyModule, error) {
	var mods []protocol.PolicyModule
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !IsPolicyFile(d.Name()) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		mods = append(mods, protocol.PolicyModule{File: filepath.ToSlash(rel), Source: string(b)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("plan policies %s: %w", dir, err)
	}
	return mods, nil
}

// IsPolicyFile says a file name is a policy's: *.rego, not *_test.rego.
func IsPolicyFile(name string) bool {
	return strings.HasSuffix(name, ".rego") && !strings.HasSuffix(name, "_test.rego")
}
