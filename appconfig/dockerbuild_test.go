package appconfig

import (
	"testing"
	"testing/fstest"
)

// withDockerBuild is the base config plus a docker_build component "api"
// whose multi-stage Dockerfile starts from a loopback registry's image.
func withDockerBuild() fstest.MapFS {
	f := base()
	f["components/api.toml"] = file(`
name = "api"
type = "docker_build"
context = "images/api"
dockerfile = "build/Dockerfile"
target = "runtime"
[build_args]
GREETING = "hello"
`)
	f["images/api/build/Dockerfile"] = file(`
ARG BASE=127.0.0.1:5000/tools/base:1
FROM ${BASE} AS build
ARG GREETING
RUN ["/tool", "write", "/out/greeting"]

FROM scratch AS runtime
COPY --from=build /out/greeting /greeting
`)
	f["images/api/main.go"] = file("package main\n")
	return f
}

func TestDockerBuildComponent(t *testing.T) {
	c := load(t, withDockerBuild())
	cmp, _ := c.Component("api")
	d := cmp.Docker
	if d == nil || d.Context != "images/api" || d.Dockerfile != "build/Dockerfile" || d.Target != "runtime" ||
		d.BuildArgs["GREETING"] != "hello" {
		t.Fatalf("docker_build: %+v", d)
	}
	if len(d.BaseImages) != 1 || d.BaseImages[0] != "127.0.0.1:5000/tools/base:1" {
		t.Errorf("base images: %v (want the expanded ARG)", d.BaseImages)
	}
	if got := cmp.Outputs(); len(got) != 3 || got[1] != ImageOutputImage {
		t.Errorf("outputs: %v", got)
	}
	in, err := c.BuildInput("api")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Source) == 0 || in.Docker == nil || !digestFormat.MatchString(in.Digest) {
		t.Fatalf("build input: %+v", in)
	}
}

// TestDockerBuildDigest: the build key follows the packed context and what
// else makes the image (build arguments, target), not the component's name.
func TestDockerBuildDigest(t *testing.T) {
	digest := func(change func(fstest.MapFS)) string {
		f := withDockerBuild()
		change(f)
		in, err := load(t, f).BuildInput("api")
		if err != nil {
			t.Fatal(err)
		}
		return in.Digest
	}
	same := digest(func(fstest.MapFS) {})
	if d := digest(func(f fstest.MapFS) {
		f["components/web.toml"].Data = append(f["components/web.toml"].Data, "# x\n"...)
	}); d != same {
		t.Error("another component's file changed the digest")
	}
	for name, change := range map[string]func(fstest.MapFS){
		"a file of the context": func(f fstest.MapFS) { f["images/api/main.go"] = file("package main // 2\n") },
		"a build argument":      func(f fstest.MapFS) { replace(f, "components/api.toml", `"hello"`, `"bye"`) },
		"the target":            func(f fstest.MapFS) { replace(f, "components/api.toml", "target = \"runtime\"\n", "") },
	} {
		if digest(change) == same {
			t.Errorf("changing %s kept the digest", name)
		}
	}
}

func TestDockerBuildProblems(t *testing.T) {
	checkProblems(t, withDockerBuild, []problemCase{
		{"no context", func(f fstest.MapFS) { replace(f, "components/api.toml", "context = \"images/api\"\n", "") },
			"components/api.toml", "context", "is required"},
		{"context not in the config", func(f fstest.MapFS) { replace(f, "components/api.toml", `"images/api"`, `"images/nope"`) },
			"components/api.toml", "context", `"images/nope" is not a directory of the config`},
		{"context outside the config", func(f fstest.MapFS) { replace(f, "components/api.toml", `"images/api"`, `"../api"`) },
			"components/api.toml", "context", "outside the config's directory"},
		{"missing Dockerfile", func(f fstest.MapFS) { delete(f, "images/api/build/Dockerfile") },
			"components/api.toml", "dockerfile", `"build/Dockerfile": no such file in the context "images/api"`},
		{"Dockerfile outside the context", func(f fstest.MapFS) {
			replace(f, "components/api.toml", `"build/Dockerfile"`, `"../Dockerfile"`)
		}, "components/api.toml", "dockerfile", "outside"},
		{"syntax error", func(f fstest.MapFS) { appendTo(f, "images/api/build/Dockerfile", "COPY\n") },
			"images/api/build/Dockerfile", "", "line 8: COPY requires at least two arguments"},
		{"unknown instruction", func(f fstest.MapFS) { appendTo(f, "images/api/build/Dockerfile", "FORM x\n") },
			"images/api/build/Dockerfile", "", `line 8: unknown instruction: FORM`},
		{"FROM without a registry host", func(f fstest.MapFS) {
			replace(f, "images/api/build/Dockerfile", "FROM scratch", "FROM alpine:3.20")
		}, "images/api/build/Dockerfile", "FROM", `line 6: not a previous stage ("build"); as an image: "alpine:3.20" has no registry host`},
		{"FROM an ARG set without a host", func(f fstest.MapFS) {
			replace(f, "components/api.toml", `GREETING = "hello"`, "GREETING = \"hello\"\nBASE = \"busybox:1\"")
		}, "images/api/build/Dockerfile", "FROM", `line 2: "busybox:1" has no registry host`},
		{"FROM a later stage", func(f fstest.MapFS) {
			replace(f, "images/api/build/Dockerfile", "FROM ${BASE} AS build", "FROM runtime AS build")
		}, "images/api/build/Dockerfile", "FROM", `"runtime" has no registry host`},
		{"no such target", func(f fstest.MapFS) { replace(f, "components/api.toml", `"runtime"`, `"tests"`) },
			"components/api.toml", "target", `the Dockerfile images/api/build/Dockerfile has no stage "tests" (stages: "build", "runtime")`},
		{"bad build argument name", func(f fstest.MapFS) { appendTo(f, "components/api.toml", "\"1X\" = \"y\"\n") },
			"components/api.toml", "build_args.1X", "not a valid build argument name"},
		{"templated build argument", func(f fstest.MapFS) {
			appendTo(f, "components/api.toml", "REGION = \"{{ .install.inputs.region }}\"\n")
		}, "components/api.toml", "build_args.REGION", "templates are not supported here"},
		{"unknown key", func(f fstest.MapFS) { appendTo(f, "components/api.toml", "[platforms]\nx = \"y\"\n") },
			"components/api.toml", "platforms", `unknown key "platforms"`},
	})
}
