package appconfig

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// Module is what a terraform module declares, read from the .tf (and
// .tf.json) files of its directory.
type Module struct {
	// Dir is the module's directory, relative to the config's root.
	Dir string `json:"dir"`
	// Files are its terraform files, relative to the config's root.
	Files     []string                  `json:"files"`
	Variables map[string]ModuleVariable `json:"variables"`
	Outputs   map[string]ModuleOutput   `json:"outputs"`

	// partial: a file could not be read, so what it declares is unknown.
	partial bool
}

// ModuleVariable is a `variable` block.
type ModuleVariable struct {
	// Required: it has no default, so a value must be given.
	Required  bool `json:"required,omitempty"`
	Sensitive bool `json:"sensitive,omitempty"`
}

// ModuleOutput is an `output` block.
type ModuleOutput struct {
	Sensitive bool `json:"sensitive,omitempty"`
}

var moduleSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "output", LabelNames: []string{"name"}},
	{Type: "module", LabelNames: []string{"name"}},
}}

var (
	variableSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "default"}, {Name: "sensitive"}}}
	outputSchema   = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "sensitive"}}}
	moduleCall     = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "source"}}}
)

// isTerraformFile reports whether terraform reads the file name as part of a
// module.
func isTerraformFile(name string) bool {
	return strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")
}

// readModule reads the module in dir (a clean path relative to the root of
// fsys). Problems within its files are added to ps; a problem with the
// directory itself is returned, for the setting that names it.
func readModule(ps *problems, fsys fs.FS, dir string) (*Module, string) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		if info, serr := fs.Stat(fsys, dir); serr == nil && !info.IsDir() {
			return nil, fmt.Sprintf("%q is a file, not a directory holding a terraform module", dir)
		}
		return nil, fmt.Sprintf("directory %q does not exist in the config", dir)
	}
	m := &Module{Dir: dir, Variables: map[string]ModuleVariable{}, Outputs: map[string]ModuleOutput{}}
	parser := hclparse.NewParser()
	defined := map[string]string{} // "variable.x" → file that declares it
	for _, e := range entries {
		if e.IsDir() || !isTerraformFile(e.Name()) {
			continue
		}
		name := path.Join(dir, e.Name())
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			ps.add(name, "", "cannot read: %v", err)
			m.partial = true
			continue
		}
		m.Files = append(m.Files, name)
		var f *hcl.File
		var diags hcl.Diagnostics
		if strings.HasSuffix(name, ".json") {
			f, diags = parser.ParseJSON(src, name)
		} else {
			f, diags = parser.ParseHCL(src, name)
		}
		if reportDiags(ps, name, diags) {
			m.partial = true
			continue
		}
		content, _, diags := f.Body.PartialContent(moduleSchema)
		if reportDiags(ps, name, diags) {
			m.partial = true
			continue
		}
		for _, b := range content.Blocks {
			label := b.Labels[0]
			id := b.Type + "." + label
			if prev, dup := defined[id]; dup {
				ps.add(name, id, "%s %q is declared twice (also in %s)", b.Type, label, prev)
				continue
			}
			defined[id] = name
			switch b.Type {
			case "variable":
				attrs, _, diags := b.Body.PartialContent(variableSchema)
				if reportDiags(ps, name, diags) {
					continue
				}
				_, hasDefault := attrs.Attributes["default"]
				m.Variables[label] = ModuleVariable{Required: !hasDefault, Sensitive: isTrue(attrs.Attributes["sensitive"])}
			case "output":
				attrs, _, diags := b.Body.PartialContent(outputSchema)
				if reportDiags(ps, name, diags) {
					continue
				}
				m.Outputs[label] = ModuleOutput{Sensitive: isTrue(attrs.Attributes["sensitive"])}
			case "module":
				checkModuleCall(ps, fsys, dir, name, label, b.Body)
			}
		}
	}
	if len(m.Files) == 0 {
		return nil, fmt.Sprintf("directory %q holds no terraform files (*.tf)", dir)
	}
	return m, ""
}

// checkModuleCall checks that a local module call stays inside the module
// directory: only that directory is sent to the runner.
func checkModuleCall(ps *problems, fsys fs.FS, dir, file, label string, body hcl.Body) {
	attrs, _, diags := body.PartialContent(moduleCall)
	if reportDiags(ps, file, diags) {
		return
	}
	attr, ok := attrs.Attributes["source"]
	if !ok {
		return
	}
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return
	}
	src := v.AsString()
	if !strings.HasPrefix(src, "./") && !strings.HasPrefix(src, "../") {
		return // a registry, git or other remote source: terraform fetches it
	}
	target := path.Join(dir, src)
	key := "module." + label + ".source"
	if target != dir && !strings.HasPrefix(target, dir+"/") {
		ps.add(file, key, "%q is outside the module directory %q: only that directory is sent to the runner", src, dir)
		return
	}
	if info, err := fs.Stat(fsys, target); err != nil || !info.IsDir() {
		ps.add(file, key, "local module %q does not exist (%s)", src, target)
	}
}

// reportDiags adds the errors among diags to ps and reports whether there
// were any.
func reportDiags(ps *problems, file string, diags hcl.Diagnostics) bool {
	bad := false
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		bad = true
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Subject != nil {
			msg = fmt.Sprintf("line %d: %s", d.Subject.Start.Line, msg)
		}
		ps.add(file, "", "%s", msg)
	}
	return bad
}

func isTrue(attr *hcl.Attribute) bool {
	if attr == nil {
		return false
	}
	v, diags := attr.Expr.Value(nil)
	return !diags.HasErrors() && v.IsKnown() && !v.IsNull() && v.Type() == cty.Bool && v.True()
}
