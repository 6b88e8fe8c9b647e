package appconfig

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
)

// The files of a config.
const (
	// ConfigFile holds [app], [sandbox] and [[inputs]].
	ConfigFile = "outpost.toml"
	// ComponentsDir holds one <name>.toml file per component.
	ComponentsDir = "components"
)

// Config is a valid app config.
type Config struct {
	App     App
	Sandbox TerraformModule
	// Inputs, in the order they are declared.
	Inputs []Input
	// Components, sorted by name.
	Components []*Component
	// Actions (actions/<name>.toml), sorted by name.
	Actions []*Action
	// Runbooks (runbooks/<name>.toml), sorted by name.
	Runbooks []*Runbook

	byName      map[string]*Component
	modules     map[string]readResult[Module] // by directory, while loading
	charts      map[string]readResult[Chart]  // by directory, while loading
	valuesFiles map[string]string             // by path: the problem with it, while loading
	// inputsUnknown: outpost.toml could not be read, so references to
	// inputs are not checked (that would only repeat the problem); nor are
	// references to badInputs, inputs declared with a problem.
	inputsUnknown bool
	badInputs     map[string]bool
	graph         Graph
	files         []string
	fsys          fs.FS
	builds        *buildKeys // BuildKey's answers
	policies      []protocol.PolicyModule

	// badActions are actions whose file could not be read: references to
	// them are not checked. readsActions are the actions whose outputs
	// templates read (ActionsRead).
	badActions   map[string]bool
	readsActions map[string]bool
}

// App is the [app] table.
type App struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Input is one [[inputs]] entry: a typed value each install is given.
type Input struct {
	Name string `json:"name"`
	// Type is one of InputTypes.
	Type string `json:"type"`
	// Default, in JSON form, or nil.
	Default     any    `json:"default,omitempty"`
	Required    bool   `json:"required"`
	Sensitive   bool   `json:"sensitive"`
	Description string `json:"description,omitempty"`
}

// TerraformModule is a terraform module with the values it is given: the
// sandbox, or a terraform_module component.
type TerraformModule struct {
	// Source is the module's directory, relative to the config's root.
	Source string `json:"source"`
	// Variables are the module's input variables, unrendered: any JSON
	// value, whose strings may be templates.
	Variables map[string]any `json:"variables"`
	// EnvVars are environment variables for terraform, unrendered.
	EnvVars map[string]string `json:"env_vars"`
	// Module is what the module's files declare.
	Module *Module `json:"-"`
}

// Component is one components/<file>.toml.
type Component struct {
	Name string `json:"name"`
	// Type is one of SupportedTypes.
	Type string `json:"type"`
	// File is the file that defines it ("components/db.toml").
	File string `json:"file"`
	// DeclaredDependencies are the `dependencies` the file lists.
	DeclaredDependencies []string `json:"declared_dependencies"`
	// Dependencies are the effective dependencies, sorted: the declared ones
	// and the components whose outputs its templates use.
	Dependencies []string `json:"dependencies"`
	// Terraform is set for a terraform_module.
	Terraform *TerraformModule `json:"terraform,omitempty"`
	// Helm is set for a helm_chart.
	Helm *HelmChart `json:"helm,omitempty"`
	// Image is set for a container_image.
	Image *ContainerImage `json:"image,omitempty"`
	// Docker is set for a docker_build.
	Docker *DockerBuild `json:"docker_build,omitempty"`
}

// Outputs lists, sorted, the outputs other components' templates may
// reference: a terraform module's outputs, HelmOutputs or ImageOutputs.
func (cmp *Component) Outputs() []string {
	switch {
	case cmp.Terraform != nil && cmp.Terraform.Module != nil:
		return sortedKeys(cmp.Terraform.Module.Outputs)
	case cmp.Helm != nil:
		return slices.Clone(HelmOutputs)
	case cmp.Image != nil, cmp.Docker != nil:
		return slices.Clone(ImageOutputs)
	}
	return []string{}
}

// Component returns a component by name.
func (c *Config) Component(name string) (*Component, bool) {
	cmp, ok := c.byName[name]
	return cmp, ok
}

// ComponentNames lists the components' names, sorted.
func (c *Config) ComponentNames() []string {
	return namesOf(c.Components)
}

func (c *Config) input(name string) (Input, bool) {
	return byName(c.Inputs, name)
}

// Graph is the components' dependency graph (effective dependencies).
func (c *Config) Graph() Graph { return c.graph.clone() }

// Files lists every file of the config, sorted.
func (c *Config) Files() []string { return slices.Clone(c.files) }

// FS is the config's directory.
func (c *Config) FS() fs.FS { return c.fsys }

// ModuleArchive packs a module directory of the config (a TerraformModule's
// Source) as a deterministic gzipped tar (see ArchiveDir), for a job
// manifest.
func (c *Config) ModuleArchive(source string) ([]byte, error) {
	return ArchiveDir(c.fsys, source)
}

// ChartArchive packs a chart directory of the config (a HelmChart's Source)
// exactly as ModuleArchive packs a module: paths relative to the chart's
// directory (Chart.yaml at the root, not under <name>/ as `helm package`
// writes), what an oci build_helm_chart job takes as its Source.
func (c *Config) ChartArchive(source string) ([]byte, error) {
	return ArchiveDir(c.fsys, source)
}

// nameRE: names are referenced in templates (.components.<name>,
// .install.inputs.<name>), so they are identifiers.
var nameRE = regexp.MustCompile(`^[a-z]([a-z0-9_]{0,61}[a-z0-9])?$`)

const nameRule = "must be 1-63 lowercase letters, digits and '_', starting with a letter and not ending with '_' (names are used in templates)"

// Load reads and validates the config in fsys (its root is the config's
// directory). An invalid config returns Problems, listing every problem
// found; any other error means fsys could not be read.
func Load(fsys fs.FS) (*Config, error) {
	var ps problems
	c := &Config{fsys: fsys, byName: map[string]*Component{}, readsActions: map[string]bool{}, builds: &buildKeys{done: map[string]BuildInput{}}}
	if err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			c.files = append(c.files, p)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("appconfig: list files: %w", err)
	}

	data, err := fs.ReadFile(fsys, ConfigFile)
	if err != nil {
		ps.add(ConfigFile, "", "missing: a config's root must hold %s with [app] and [sandbox]", ConfigFile)
		c.inputsUnknown = true
	} else {
		c.readConfigFile(&ps, data)
	}
	c.readComponents(&ps)
	c.readActions(&ps)
	c.markBadActions()
	c.readRunbooks(&ps)

	if c.Sandbox.Source != "" {
		c.Sandbox.Module = c.readModule(&ps, ConfigFile, "sandbox.source", c.Sandbox.Source)
		checkVariables(&ps, owner{file: ConfigFile, prefix: "sandbox."}, &c.Sandbox)
	}
	for _, cmp := range c.Components {
		if tm := cmp.Terraform; tm != nil && tm.Source != "" {
			tm.Module = c.readModule(&ps, cmp.File, "source", tm.Source)
			checkVariables(&ps, owner{file: cmp.File, self: &cmp.Name}, tm)
		}
		if h := cmp.Helm; h != nil {
			if h.Source != "" {
				h.Chart = c.readChart(&ps, cmp.File, "source", h.Source)
			}
			for i, f := range h.ValuesFiles {
				c.readValuesFile(&ps, cmp.File, fmt.Sprintf("values_files[%d]", i), f)
			}
		}
	}
	c.checkReleases(&ps)
	c.readPolicies(&ps)

	// Templates, now that every module's outputs are known.
	c.checkTemplates(&ps, owner{file: ConfigFile, prefix: "sandbox."}, c.Sandbox.templatedSettings())
	edges := map[string]map[string]string{} // component → dependency → the key that makes it one
	for _, cmp := range c.Components {
		edges[cmp.Name] = map[string]string{}
		for i, dep := range cmp.DeclaredDependencies {
			key := fmt.Sprintf("dependencies[%d]", i)
			switch _, ok := c.byName[dep]; {
			case dep == cmp.Name:
				ps.add(cmp.File, key, "component %q cannot depend on itself", cmp.Name)
			case !ok:
				ps.add(cmp.File, key, "no component %q (components: %s)", dep, quotedList(c.ComponentNames()))
			default:
				edges[cmp.Name][dep] = "dependencies"
			}
		}
		for dep, key := range c.checkTemplates(&ps, owner{file: cmp.File, self: &cmp.Name}, cmp.templatedSettings()) {
			if _, declared := edges[cmp.Name][dep]; !declared {
				edges[cmp.Name][dep] = key
			}
		}
	}
	c.checkActions(&ps)
	c.checkRunbooks(&ps)
	c.graph = Graph{}
	for _, cmp := range c.Components {
		cmp.Dependencies = sortedKeys(edges[cmp.Name])
		c.graph[cmp.Name] = cmp.Dependencies
	}
	for _, cycle := range c.graph.Cycles() {
		first := c.byName[cycle[0]]
		steps := make([]string, len(cycle)-1)
		for i := range steps {
			from, to := cycle[i], cycle[i+1]
			how := edges[from][to]
			if how != "dependencies" {
				how = "template in " + how
			}
			steps[i] = fmt.Sprintf("%s → %s: %s", from, to, how)
		}
		key := edges[cycle[0]][cycle[1]]
		ps.add(first.File, key, "dependency cycle %s (%s)", strings.Join(cycle, " → "), strings.Join(steps, "; "))
	}

	c.modules, c.charts, c.valuesFiles = nil, nil, nil
	if err := ps.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// readConfigFile reads outpost.toml.
func (c *Config) readConfigFile(ps *problems, data []byte) {
	raw, ok := decodeTOML(ps, ConfigFile, data)
	if !ok {
		c.inputsUnknown = true
		return
	}
	m := checkTable(ps, ConfigFile, "", raw, configFileFields)
	if _, given := raw["inputs"]; given && m["inputs"] == nil {
		c.inputsUnknown = true
	}
	if app, ok := m["app"].(map[string]any); ok {
		c.App.Name, _ = app["name"].(string)
		c.App.Description, _ = app["description"].(string)
		if _, given := app["name"]; given && !appNameRE.MatchString(c.App.Name) {
			ps.add(ConfigFile, "app.name", "%q must be 1-63 lowercase letters, digits, '.', '_' or '-', starting and ending with a letter or digit", c.App.Name)
		}
	}
	if sb, ok := m["sandbox"].(map[string]any); ok {
		c.Sandbox = terraformModule(ps, ConfigFile, "sandbox.", sb)
	}
	inputs, _ := m["inputs"].([]map[string]any)
	c.Inputs, c.badInputs = readInputs(ps, ConfigFile, "inputs", inputs)
}

// readInputs reads the checked [[inputs]] of file (key is "inputs"): the
// good ones, and the names of those declared with a problem.
func readInputs(ps *problems, file, key string, inputs []map[string]any) ([]Input, map[string]bool) {
	var good []Input
	var bad map[string]bool
	seen := map[string]int{}
	for i, in := range inputs {
		key := fmt.Sprintf("%s[%d].", key, i)
		input := Input{}
		input.Name, _ = in["name"].(string)
		input.Type, _ = in["type"].(string)
		input.Required, _ = in["required"].(bool)
		input.Sensitive, _ = in["sensitive"].(bool)
		input.Description, _ = in["description"].(string)
		ok := true
		if _, given := in["name"]; given {
			if !nameRE.MatchString(input.Name) {
				ps.add(file, key+"name", "%q %s", input.Name, nameRule)
				ok = false
			} else if j, dup := seen[input.Name]; dup {
				ps.add(file, key+"name", "input %q is already declared (inputs[%d])", input.Name, j)
				ok = false
			} else {
				seen[input.Name] = i
			}
		} else {
			ok = false
		}
		if _, given := in["type"]; given && !slices.Contains(InputTypes, input.Type) {
			ps.add(file, key+"type", "%q is not an input type (one of %s)", input.Type, strings.Join(InputTypes, ", "))
			ok = false
		}
		if def, given := in["default"]; given {
			switch {
			case input.Required:
				ps.add(file, key+"default", "input %q is required, so it cannot have a default", input.Name)
			case slices.Contains(InputTypes, input.Type) && jsonType(def) != input.Type:
				ps.add(file, key+"default", "input %q is a %s, but its default is a %s", input.Name, input.Type, jsonType(def))
			default:
				input.Default = def
			}
		}
		if ok {
			good = append(good, input)
		} else if input.Name != "" {
			if bad == nil {
				bad = map[string]bool{}
			}
			bad[input.Name] = true
		}
	}
	return good, bad
}

// appNameRE is the store's rule for app names.
var appNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$`)

// readComponents reads components/*.toml.
func (c *Config) readComponents(ps *problems) {
	c.eachTOML(ps, ComponentsDir, func(file string, raw map[string]any) {
		// The type decides which keys are known.
		typ, _ := raw["type"].(string)
		fields := componentCommonFields
		extra, supported := componentTypeFields[typ]
		fields = append(slices.Clone(fields), extra...)
		if !supported {
			// Only the common keys are checked: the others belong to a type
			// that is missing or refused anyway.
			for _, k := range sortedKeys(raw) {
				if !slices.ContainsFunc(fields, func(f field) bool { return f.key == k }) {
					delete(raw, k)
				}
			}
		}
		m := checkTable(ps, file, "", raw, fields)
		cmp := &Component{File: file}
		cmp.Name, _ = m["name"].(string)
		cmp.Type, _ = m["type"].(string)
		deps, _ := m["dependencies"].([]string)
		for i, d := range deps {
			if slices.Contains(cmp.DeclaredDependencies, d) {
				ps.add(file, fmt.Sprintf("dependencies[%d]", i), "%q is listed twice", d)
				continue
			}
			cmp.DeclaredDependencies = append(cmp.DeclaredDependencies, d)
		}
		if cmp.DeclaredDependencies == nil {
			cmp.DeclaredDependencies = []string{}
		}
		if _, given := m["type"]; given && !supported {
			if slices.Contains(contract.ComponentTypes, typ) {
				ps.add(file, "type", "component type %q is not supported yet (supported: %s)", typ, strings.Join(SupportedTypes, ", "))
			} else {
				ps.add(file, "type", "unknown component type %q (one of %s)", typ, strings.Join(contract.ComponentTypes, ", "))
			}
		}
		_, named := m["name"]
		validName := named && nameRE.MatchString(cmp.Name)
		switch typ {
		case contract.TypeTerraformModule:
			tm := terraformModule(ps, file, "", m)
			cmp.Terraform = &tm
		case contract.TypeHelmChart:
			name := ""
			if validName {
				name = cmp.Name
			}
			cmp.Helm = helmChart(ps, file, name, m)
		case contract.TypeContainerImage:
			cmp.Image = containerImage(ps, file, m)
		case contract.TypeDockerBuild:
			cmp.Docker = dockerBuild(ps, c.fsys, file, m)
		}
		if !named {
			return
		}
		if !validName {
			ps.add(file, "name", "%q %s", cmp.Name, nameRule)
			return
		}
		if prev, dup := c.byName[cmp.Name]; dup {
			ps.add(file, "name", "component %q is already defined in %s", cmp.Name, prev.File)
			return
		}
		c.byName[cmp.Name] = cmp
		c.Components = append(c.Components, cmp)
	})
	slices.SortFunc(c.Components, func(a, b *Component) int { return strings.Compare(a.Name, b.Name) })
}

// eachTOML calls fn with each *.toml file directly in dir, by name, parsed;
// a file that cannot be read or parsed is a problem instead.
func (c *Config) eachTOML(ps *problems, dir string, fn func(file string, raw map[string]any)) {
	entries, err := fs.ReadDir(c.fsys, dir)
	if err != nil {
		return // no such directory: none
	}
	for _, e := range entries { // sorted by name
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".toml") {
			continue
		}
		file := path.Join(dir, e.Name())
		data, err := fs.ReadFile(c.fsys, file)
		if err != nil {
			ps.add(file, "", "cannot read: %v", err)
			continue
		}
		if raw, ok := decodeTOML(ps, file, data); ok {
			fn(file, raw)
		}
	}
}

// terraformModule reads the checked keys of a sandbox or terraform
// component.
func terraformModule(ps *problems, file, prefix string, m map[string]any) TerraformModule {
	tm := TerraformModule{Variables: map[string]any{}, EnvVars: map[string]string{}}
	if src, ok := m["source"].(string); ok {
		clean, err := cleanPath(src, "directory", "modules/db")
		if err != nil {
			ps.add(file, prefix+"source", "%v", err)
		} else {
			tm.Source = clean
		}
	}
	if v, ok := m["variables"].(map[string]any); ok {
		tm.Variables = v
	}
	if env, ok := m["env_vars"].(map[string]string); ok {
		for _, k := range sortedKeys(env) {
			if !protocol.ValidEnvName(k) {
				ps.add(file, prefix+"env_vars."+k, "%q is not a valid environment variable name (letters, digits and '_', not starting with a digit)", k)
				continue
			}
			if why := protocol.TerraformRunnerEnv(k); why != "" {
				ps.add(file, prefix+"env_vars."+k, "%s", why)
				continue
			}
			tm.EnvVars[k] = env[k]
		}
	}
	return tm
}

// cleanPath checks a path that must name a file or directory (what) inside
// the config, e.g. example.
func cleanPath(src, what, example string) (string, error) {
	if src == "" {
		return "", fmt.Errorf("must name a %s of the config, e.g. %q", what, example)
	}
	if strings.Contains(src, "://") || strings.Contains(src, "::") {
		return "", fmt.Errorf("%q: only a %s of the config is supported here, e.g. %q", src, what, example)
	}
	if path.IsAbs(src) || strings.Contains(src, `\`) {
		return "", fmt.Errorf("%q must be a %s relative to the config's root, with '/' separators", src, what)
	}
	clean := path.Clean(src)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("%q is outside the config's directory", src)
	}
	return clean, nil
}

// readModule reads a module once, however many settings name it.
func (c *Config) readModule(ps *problems, file, key, dir string) *Module {
	return readOnce(&c.modules, ps, file, key, dir, func() (*Module, string) { return readModule(ps, c.fsys, dir) })
}

// readResult is what reading a directory gave: the value, or the problem
// with the directory itself.
type readResult[T any] struct {
	value   *T
	problem string
}

// readOnce reads dir once, however many settings name it, keeping the
// result in *cache; a problem with the directory itself is reported on
// each setting that names it.
func readOnce[T any](cache *map[string]readResult[T], ps *problems, file, key, dir string, read func() (*T, string)) *T {
	if *cache == nil {
		*cache = map[string]readResult[T]{}
	}
	r, ok := (*cache)[dir]
	if !ok {
		r.value, r.problem = read()
		(*cache)[dir] = r
	}
	if r.problem != "" {
		ps.add(file, key, "%s", r.problem)
	}
	return r.value
}

// checkVariables checks a module's settings against what it declares:
// every variable given is declared, every required one is given (as a
// variable or a TF_VAR_ environment variable).
func checkVariables(ps *problems, o owner, tm *TerraformModule) {
	m := tm.Module
	if m == nil || m.partial {
		return
	}
	for _, name := range sortedKeys(tm.Variables) {
		if _, ok := m.Variables[name]; !ok {
			ps.add(o.file, o.prefix+"variables."+name, "module %s declares no variable %q (variables: %s)", m.Dir, name, quotedList(sortedKeys(m.Variables)))
		}
	}
	for _, name := range sortedKeys(m.Variables) {
		if !m.Variables[name].Required {
			continue
		}
		_, set := tm.Variables[name]
		_, setEnv := tm.EnvVars["TF_VAR_"+name]
		if !set && !setEnv {
			ps.add(o.file, o.prefix+"variables", "module %s requires variable %q (it has no default), which is not set", m.Dir, name)
		}
	}
}
