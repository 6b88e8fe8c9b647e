package appconfig

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// HelmChart is a helm_chart component: a chart directory of the config,
// deployed as one helm release.
type HelmChart struct {
	// Source is the chart's directory, relative to the config's root.
	Source string `json:"source"`
	// ReleaseName is the release's name: release_name, or the component's
	// name with '_' written '-'.
	ReleaseName string `json:"release_name"`
	// Namespace is the release's namespace: namespace, or "default".
	Namespace       string `json:"namespace"`
	CreateNamespace bool   `json:"create_namespace"`
	// Values are the chart's values, unrendered: a JSON object whose
	// strings may be templates.
	Values map[string]any `json:"values"`
	// ValuesFiles are YAML files of the config, relative to its root,
	// merged in order over the chart's values.yaml and under Values.
	ValuesFiles []string `json:"values_files"`
	// Timeout bounds each Kubernetes operation helm waits for; 0 when not
	// set (helm's default, 5 minutes).
	Timeout time.Duration `json:"timeout,omitempty"`
	Wait    bool          `json:"wait"`
	// Kubeconfig is a template rendering the kubeconfig of the cluster the
	// release goes to; "" for the sandbox's kubeconfig output.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// RelocateImages: the images the chart runs are copied, by digest, into
	// the install's registry and the rendered manifests point there.
	RelocateImages bool `json:"relocate_images,omitempty"`
	// Images are the images relocated, full references ("docker.io/library/nginx:1.27");
	// nil: every image of the rendered manifests' pod specs.
	Images []string `json:"images,omitempty"`
	// Chart is what the chart's Chart.yaml says.
	Chart *Chart `json:"-"`

	releaseSet bool // release_name is given
}

// Chart is what a chart's Chart.yaml declares.
type Chart struct {
	// Dir is the chart's directory, relative to the config's root.
	Dir        string `json:"dir"`
	APIVersion string `json:"api_version"`
	Name       string `json:"name"`
	Version    string `json:"version"`
	AppVersion string `json:"app_version,omitempty"`
	// Dependencies are the names of the charts it depends on, each in its
	// charts/ directory.
	Dependencies []string `json:"dependencies,omitempty"`
}

// ChartFile is the file that makes a directory a chart.
const ChartFile = "Chart.yaml"

// DefaultNamespace is a helm release's namespace when namespace is not set.
const DefaultNamespace = "default"

// MaxReleaseNameLen is helm's limit on a release's name.
const MaxReleaseNameLen = 53

// The outputs of a helm_chart component, as templates of other components
// see them (.components.<name>.outputs.<output>): the release as deployed.
const (
	HelmOutputReleaseName = "release_name"
	HelmOutputNamespace   = "namespace"
	// HelmOutputRevision is a number.
	HelmOutputRevision = "revision"
	// HelmOutputStatus is helm's status of the revision ("deployed").
	HelmOutputStatus = "status"
	// HelmOutputObjects lists the release's objects, "Kind/name" or
	// "Kind/namespace/name" (a list of strings).
	HelmOutputObjects = "objects"
)

// HelmOutputs are the outputs of every helm_chart component, sorted.
var HelmOutputs = []string{HelmOutputNamespace, HelmOutputObjects, HelmOutputReleaseName, HelmOutputRevision, HelmOutputStatus}

// HelmOutputValues are the outputs of a deployed helm_chart component, as
// Data.Components holds them.
func HelmOutputValues(release, namespace string, revision int, status string, objects []string) map[string]Value {
	objs := make([]any, len(objects))
	for i, o := range objects {
		objs[i] = o
	}
	return map[string]Value{
		HelmOutputObjects:     {Value: objs},
		HelmOutputReleaseName: {Value: release},
		HelmOutputNamespace:   {Value: namespace},
		HelmOutputRevision:    {Value: json.Number(fmt.Sprint(revision))},
		HelmOutputStatus:      {Value: status},
	}
}

// dns1123Label: Kubernetes' rule for namespaces, and helm's (stricter here)
// for release names.
var dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

const dns1123Rule = "lowercase letters, digits and '-', starting and ending with a letter or digit"

// helmChart reads the checked keys of a helm_chart component named name
// (which may be "" when the file names none).
func helmChart(ps *problems, file, name string, m map[string]any) *HelmChart {
	h := &HelmChart{Namespace: DefaultNamespace, Values: map[string]any{}, ValuesFiles: []string{}}
	if src, ok := m["source"].(string); ok {
		clean, err := cleanPath(src, "directory", "charts/web")
		if err != nil {
			ps.add(file, "source", "%v", err)
		} else {
			h.Source = clean
		}
	}
	if rel, ok := m["release_name"].(string); ok {
		if !dns1123Label.MatchString(rel) || len(rel) > MaxReleaseNameLen {
			ps.add(file, "release_name", "%q must be 1-%d %s (a helm release name)", rel, MaxReleaseNameLen, dns1123Rule)
		} else {
			h.ReleaseName, h.releaseSet = rel, true
		}
	} else if name != "" {
		h.ReleaseName = strings.ReplaceAll(name, "_", "-")
		if len(h.ReleaseName) > MaxReleaseNameLen {
			ps.add(file, "name", "%q is longer than a helm release name may be (%d characters): set release_name", name, MaxReleaseNameLen)
			h.ReleaseName = ""
		}
	}
	if ns, ok := m["namespace"].(string); ok {
		if !dns1123Label.MatchString(ns) || len(ns) > 63 {
			ps.add(file, "namespace", "%q must be 1-63 %s (a Kubernetes namespace)", ns, dns1123Rule)
		} else {
			h.Namespace = ns
		}
	}
	h.CreateNamespace, _ = m["create_namespace"].(bool)
	h.Wait, _ = m["wait"].(bool)
	h.Kubeconfig, _ = m["kubeconfig"].(string)
	if v, ok := m["values"].(map[string]any); ok {
		h.Values = v
	}
	files, _ := m["values_files"].([]string)
	for i, f := range files {
		key := fmt.Sprintf("values_files[%d]", i)
		clean, err := cleanPath(f, "file", "values/prod.yaml")
		switch {
		case err != nil:
			ps.add(file, key, "%v", err)
		case containsString(h.ValuesFiles, clean):
			ps.add(file, key, "%q is listed twice", f)
		default:
			h.ValuesFiles = append(h.ValuesFiles, clean)
		}
	}
	h.RelocateImages, h.Images = relocatedImages(ps, file, m)
	if s, ok := m["timeout"].(string); ok {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			ps.add(file, "timeout", "%q is not a duration: write a number with a unit, e.g. \"90s\", \"5m\" or \"1h30m\"", s)
		case d <= 0:
			ps.add(file, "timeout", "%q must be longer than zero", s)
		default:
			h.Timeout = d
		}
	}
	return h
}

// relocatedImages reads relocate_images and images: each image a full
// reference, listed once, and a list only with relocate_images = true.
func relocatedImages(ps *problems, file string, m map[string]any) (bool, []string) {
	relocate, _ := m["relocate_images"].(bool)
	list, given := m["images"].([]string)
	if given && !relocate {
		ps.add(file, "images", "lists the images to relocate: set relocate_images = true too")
	}
	var images []string
	seen := map[string]bool{}
	for i, s := range list {
		key := fmt.Sprintf("images[%d]", i)
		ref, err := ParseImageReference(s)
		switch {
		case err != nil:
			ps.add(file, key, "%v", err)
		case seen[ref.String()]:
			ps.add(file, key, "%q is listed twice", s)
		default:
			seen[ref.String()] = true
			images = append(images, s)
		}
	}
	return relocate, images
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// semverRE is the version syntax helm accepts (Masterminds/semver's loose
// form: "1.2.3", "v1.2", "1.0.0-rc.1+build.5").
var semverRE = regexp.MustCompile(`^v?[0-9]+(\.[0-9]+)?(\.[0-9]+)?(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// readChart reads the chart in dir (a clean path relative to the root of
// fsys). Problems within Chart.yaml are added to ps, on that file; a problem
// with the directory itself is returned, for the setting that names it.
func readChart(ps *problems, fsys fs.FS, dir string) (*Chart, string) {
	info, err := fs.Stat(fsys, dir)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("directory %q does not exist in the config", dir)
	case !info.IsDir():
		return nil, fmt.Sprintf("%q is a file, not a directory holding a helm chart", dir)
	}
	file := path.Join(dir, ChartFile)
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Sprintf("directory %q holds no %s: a helm chart's directory must", dir, ChartFile)
	}
	root, ok := readYAMLMapping(ps, file, data)
	if !ok {
		return nil, ""
	}
	ch := &Chart{Dir: dir, APIVersion: "v1"}
	str := func(key string, required bool) (string, bool) {
		n := mappingValue(root, key)
		if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
			if required {
				ps.add(file, key, "is required")
			}
			return "", false
		}
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			ps.add(file, key, "line %d: must be a string%s", n.Line, quoteHint(n))
			return "", false
		}
		return n.Value, true
	}
	good := true
	if v, ok := str("apiVersion", false); ok {
		if v != "v1" && v != "v2" {
			ps.add(file, "apiVersion", "%q is not a chart API version (v1 or v2)", v)
			good = false
		}
		ch.APIVersion = v
	}
	if v, ok := str("name", true); ok {
		if v == "" || v == "." || v == ".." || strings.ContainsAny(v, `/\`) {
			ps.add(file, "name", "%q is not a chart name", v)
			good = false
		}
		ch.Name = v
	} else {
		good = false
	}
	if v, ok := str("version", true); ok {
		if !semverRE.MatchString(v) {
			ps.add(file, "version", "%q is not a semantic version (e.g. \"1.2.3\")", v)
			good = false
		}
		ch.Version = v
	} else {
		good = false
	}
	ch.AppVersion, _ = str("appVersion", false)
	if v, ok := str("type", false); ok {
		switch v {
		case "application":
		case "library":
			ps.add(file, "type", "a library chart cannot be deployed: only an application chart can")
			good = false
		default:
			ps.add(file, "type", "%q is not a chart type (application or library)", v)
			good = false
		}
	}
	if deps := mappingValue(root, "dependencies"); deps != nil {
		if !checkChartDependencies(ps, fsys, dir, file, deps, ch) {
			good = false
		}
	}
	if !good {
		return nil, ""
	}
	return ch, ""
}

// checkChartDependencies checks that every dependency of a chart is in its
// charts/ directory: nothing fetches them (helm dependency build) between
// the config and the cluster.
func checkChartDependencies(ps *problems, fsys fs.FS, dir, file string, deps *yaml.Node, ch *Chart) bool {
	if deps.Kind != yaml.SequenceNode {
		ps.add(file, "dependencies", "line %d: must be a list", deps.Line)
		return false
	}
	vendored := map[string]bool{} // names of the charts in charts/
	var archives []string
	entries, _ := fs.ReadDir(fsys, path.Join(dir, "charts"))
	for _, e := range entries {
		p := path.Join(dir, "charts", e.Name())
		switch {
		case e.IsDir():
			data, err := fs.ReadFile(fsys, path.Join(p, ChartFile))
			if err != nil {
				continue
			}
			var meta struct {
				Name string `yaml:"name"`
			}
			if yaml.Unmarshal(data, &meta) == nil && meta.Name != "" {
				vendored[meta.Name] = true
			}
		case strings.HasSuffix(e.Name(), ".tgz"):
			archives = append(archives, e.Name())
		}
	}
	good := true
	for i, d := range deps.Content {
		key := fmt.Sprintf("dependencies[%d]", i)
		name := mappingValue(d, "name")
		if d.Kind != yaml.MappingNode || name == nil || name.Kind != yaml.ScalarNode || name.Value == "" {
			ps.add(file, key, "line %d: a dependency needs a name", d.Line)
			good = false
			continue
		}
		ch.Dependencies = append(ch.Dependencies, name.Value)
		found := vendored[name.Value]
		for _, a := range archives {
			found = found || strings.HasPrefix(a, name.Value+"-")
		}
		if !found {
			ps.add(file, key, "chart %q is not in %s/charts: nothing fetches dependencies after the config is synced, so run `helm dependency build %s` and include charts/ in the config",
				name.Value, dir, dir)
			good = false
		}
	}
	return good
}

// readYAMLMapping parses a YAML document that must be a mapping (or empty);
// problems are added on file.
func readYAMLMapping(ps *problems, file string, data []byte) (*yaml.Node, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		ps.add(file, "", "invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, false
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode}, true
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return &yaml.Node{Kind: yaml.MappingNode}, true
	}
	if root.Kind != yaml.MappingNode {
		ps.add(file, "", "line %d: must be a YAML mapping (key: value), not %s", root.Line, yamlKind(root))
		return nil, false
	}
	return root, true
}

func yamlKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a single value"
	}
	return "that"
}

// mappingValue returns the value of key in a mapping node, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// quoteHint suggests quoting a scalar YAML read as another type (a
// version 1.0 is a number).
func quoteHint(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return fmt.Sprintf(": quote it (%q)", n.Value)
	}
	return ""
}

// readValuesFile checks a values file once, however many components list
// it; a problem with the path itself is returned, for the setting that
// names it.
func (c *Config) readValuesFile(ps *problems, file, key, p string) {
	if c.valuesFiles == nil {
		c.valuesFiles = map[string]string{}
	}
	problem, seen := c.valuesFiles[p]
	if !seen {
		info, err := fs.Stat(c.fsys, p)
		switch {
		case err != nil:
			problem = fmt.Sprintf("file %q does not exist in the config", p)
		case info.IsDir():
			problem = fmt.Sprintf("%q is a directory, not a YAML values file", p)
		default:
			data, err := fs.ReadFile(c.fsys, p)
			if err != nil {
				problem = fmt.Sprintf("cannot read %q: %v", p, err)
			} else {
				readYAMLMapping(ps, p, data) // problems inside it are its own
			}
		}
		c.valuesFiles[p] = problem
	}
	if problem != "" {
		ps.add(file, key, "%s", problem)
	}
}

// readChart reads a chart once, however many components name it.
func (c *Config) readChart(ps *problems, file, key, dir string) *Chart {
	return readOnce(&c.charts, ps, file, key, dir, func() (*Chart, string) { return readChart(ps, c.fsys, dir) })
}

// checkReleases reports two helm components that would share a release.
func (c *Config) checkReleases(ps *problems) {
	owners := map[[2]string]*Component{}
	for _, cmp := range c.Components {
		h := cmp.Helm
		if h == nil || h.ReleaseName == "" {
			continue
		}
		id := [2]string{h.Namespace, h.ReleaseName}
		if prev, dup := owners[id]; dup {
			key := "release_name"
			if !h.releaseSet {
				key = "name"
			}
			ps.add(cmp.File, key, "release %q in namespace %q is already component %q's (%s): set another release_name or namespace",
				h.ReleaseName, h.Namespace, prev.Name, prev.File)
			continue
		}
		owners[id] = cmp
	}
}
