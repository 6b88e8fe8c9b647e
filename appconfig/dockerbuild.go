package appconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"

	"github.com/outpost-dev/outpost/protocol"
)

// DefaultDockerfile is a docker_build's Dockerfile when the component names
// none: "Dockerfile" at the root of its context.
const DefaultDockerfile = "Dockerfile"

// DockerBuild is a docker_build component: an image the org's build runner
// builds from a Dockerfile of the config, pushes into the vendor's registry
// and each install then gets in its own registry, as a container_image's.
type DockerBuild struct {
	// Context is the build context: a directory of the config.
	Context string `json:"context"`
	// Dockerfile is the Dockerfile's path inside Context.
	Dockerfile string `json:"dockerfile"`
	// BuildArgs are the build's ARG values (literal: a build is one per app,
	// for every install).
	BuildArgs map[string]string `json:"build_args"`
	// Target is the stage to build; the last one when empty.
	Target string `json:"target,omitempty"`
	// BaseImages are the images the Dockerfile's stages start from, as
	// written after expanding ARGs (no "scratch", no stage names).
	BaseImages []string `json:"base_images"`
}

// DockerfilePath is the Dockerfile's path in the config.
func (d *DockerBuild) DockerfilePath() string { return path.Join(d.Context, d.Dockerfile) }

// dockerBuild reads the checked keys of a docker_build component, then
// reads and checks its Dockerfile.
func dockerBuild(ps *problems, fsys fs.FS, file string, m map[string]any) *DockerBuild {
	d := &DockerBuild{Dockerfile: DefaultDockerfile, BuildArgs: map[string]string{}}
	if src, ok := m["context"].(string); ok {
		clean, err := cleanPath(src, "directory", "images/api")
		if err != nil {
			ps.add(file, "context", "%v", err)
		} else if st, err := fs.Stat(fsys, clean); err != nil || !st.IsDir() {
			ps.add(file, "context", "%q is not a directory of the config", src)
		} else {
			d.Context = clean
		}
	}
	if df, ok := m["dockerfile"].(string); ok {
		clean, err := cleanPath(df, "file", "Dockerfile")
		if err != nil {
			ps.add(file, "dockerfile", "%v (a path inside the context)", err)
			d.Dockerfile = ""
		} else {
			d.Dockerfile = clean
		}
	}
	if args, ok := m["build_args"].(map[string]string); ok {
		for _, k := range sortedKeys(args) {
			switch {
			case !protocol.ValidEnvName(k):
				ps.add(file, "build_args."+k, "%q is not a valid build argument name (letters, digits and '_', not starting with a digit)", k)
			case strings.Contains(args[k], "{{"):
				ps.add(file, "build_args."+k, "templates are not supported here: an image is built once, for every install")
			default:
				d.BuildArgs[k] = args[k]
			}
		}
	}
	d.Target, _ = m["target"].(string)
	if d.Context == "" || d.Dockerfile == "" {
		return d
	}
	data, err := fs.ReadFile(fsys, d.DockerfilePath())
	if err != nil {
		ps.add(file, "dockerfile", "%q: no such file in the context %q", d.Dockerfile, d.Context)
		return d
	}
	stages := checkDockerfile(ps, d.DockerfilePath(), data, d)
	if d.Target != "" && stages != nil && !slices.Contains(stages, strings.ToLower(d.Target)) {
		ps.add(file, "target", "the Dockerfile %s has no stage %q (stages: %s)", d.DockerfilePath(), d.Target, quotedList(stages))
	}
	return d
}

// checkDockerfile parses a Dockerfile with BuildKit's parser and checks that
// every FROM names a previous stage, scratch, or an image with a registry
// host; it records the base images in d and returns the stage names (nil
// when the file does not parse).
func checkDockerfile(ps *problems, file string, data []byte, d *DockerBuild) []string {
	res, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		ps.add(file, "", "%s", dockerfileError(err))
		return nil
	}
	stages, metaArgs, err := instructions.Parse(res.AST, nil)
	if err != nil {
		ps.add(file, "", "%s", dockerfileError(err))
		return nil
	}
	if len(stages) == 0 {
		ps.add(file, "", "the Dockerfile has no FROM instruction")
		return nil
	}
	// FROM may use the ARGs declared before the first stage, set by
	// build_args or their defaults, as docker expands them.
	env := map[string]string{}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			if v, ok := d.BuildArgs[kv.Key]; ok {
				env[kv.Key] = v
			} else if kv.Value != nil {
				env[kv.Key] = *kv.Value
			}
		}
	}
	var envList []string
	for _, k := range sortedKeys(env) {
		envList = append(envList, k+"="+env[k])
	}
	lex := shell.NewLex(res.EscapeToken)
	names := []string{}
	for _, st := range stages {
		line := 0
		if len(st.Location) > 0 {
			line = st.Location[0].Start.Line
		}
		base, _, err := lex.ProcessWord(st.BaseName, shell.EnvsFromSlice(envList))
		switch {
		case err != nil:
			ps.add(file, "FROM", "line %d: %q: %v", line, st.BaseName, err)
		case base == "":
			ps.add(file, "FROM", "line %d: %q names no image (an ARG without a value? set it in build_args)", line, st.BaseName)
		case base == "scratch" || slices.Contains(names, strings.ToLower(base)):
		default:
			if _, err := ParseImageReference(base); err != nil && len(names) == 0 {
				ps.add(file, "FROM", "line %d: %v", line, err)
			} else if err != nil {
				ps.add(file, "FROM", "line %d: not a previous stage (%s); as an image: %v", line, quotedList(names), err)
			} else if !slices.Contains(d.BaseImages, base) {
				d.BaseImages = append(d.BaseImages, base)
			}
		}
		if st.Name != "" {
			names = append(names, strings.ToLower(st.Name))
		}
	}
	return names
}

// dockerfileError is the parser's message, led by the line it is about.
func dockerfileError(err error) string {
	var le *parser.LocationError
	msg := err.Error()
	if errors.As(err, &le) && len(le.Locations) > 0 && len(le.Locations[0]) > 0 {
		msg = fmt.Sprintf("line %d: %v", le.Locations[0][0].Start.Line, le.Unwrap())
	}
	return strings.TrimPrefix(msg, "dockerfile parse error on ")
}
