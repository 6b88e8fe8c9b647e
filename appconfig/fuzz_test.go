package appconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// fuzzBase is examples/demo-app in memory, and the files of it a fuzz input
// may replace: every file Load parses.
func fuzzBase(tb testing.TB) (fstest.MapFS, []string) {
	tb.Helper()
	base := fstest.MapFS{}
	var editable, actions []string
	err := fs.WalkDir(os.DirFS(exampleDir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(os.DirFS(exampleDir), p)
		base[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		if strings.HasSuffix(p, ".toml") && strings.HasPrefix(p, ActionsDir+"/") {
			actions = append(actions, p)
		} else if strings.HasSuffix(p, ".toml") || strings.HasSuffix(p, ".tf") || strings.HasPrefix(p, "charts/") && !strings.Contains(p, "/templates/") {
			editable = append(editable, p)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	// Action files last, so the seed corpus's file numbers keep naming
	// the files they were written for.
	slices.Sort(editable)
	slices.Sort(actions)
	editable = append(editable, actions...)
	return base, editable
}

// FuzzLoad replaces one file of examples/demo-app (outpost.toml, a
// component's TOML, a module's main.tf, the chart's Chart.yaml or
// values.yaml) with the fuzz input and loads the config. Load never panics;
// it is deterministic; it fails only with Problems, each with a message and
// naming a file of the config (or none); a config it accepts has an acyclic
// graph whose levels hold each component once, after its dependencies, and
// comes back the same through its archive (Archive, then FromArchive).
func FuzzLoad(f *testing.F) {
	base, editable := fuzzBase(f)
	for i, p := range editable {
		f.Add(uint8(i), base[p].Data)
	}
	// build-app's components stand in for a component of the demo.
	for _, p := range []string{"site.toml", "site_image.toml"} {
		data, err := os.ReadFile("../examples/build-app/components/" + p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(slices.Index(editable, "components/web.toml")), data)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		fsys := maps.Clone(base)
		name := editable[int(which)%len(editable)]
		fsys[name] = &fstest.MapFile{Data: data, Mode: 0o644}
		c, err := Load(fsys)
		again, err2 := Load(fsys)
		if err != nil {
			checkLoadProblems(t, fsys, name, err)
			if err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("%s: loading twice gave %v, then %v", name, err, err2)
			}
			return
		}
		if err2 != nil {
			t.Fatalf("%s: loaded, then failed: %v", name, err2)
		}
		want := configJSON(t, c)
		if got := configJSON(t, again); !bytes.Equal(got, want) {
			t.Fatalf("%s: loading twice gave\n%s\nthen\n%s", name, want, got)
		}
		checkGraph(t, c)
		archive, err := c.Archive()
		if err != nil {
			t.Fatalf("%s: archive: %v", name, err)
		}
		back, err := FromArchive(archive)
		if err != nil {
			t.Fatalf("%s: the archive of a valid config does not load: %v", name, err)
		}
		if got := configJSON(t, back); !bytes.Equal(got, want) {
			t.Fatalf("%s: through its archive the config changed from\n%s\nto\n%s", name, want, got)
		}
	})
}

// checkLoadProblems: err is Problems, each with a message, about a file of the
// config or about none.
func checkLoadProblems(t *testing.T, fsys fs.FS, name string, err error) {
	var ps Problems
	if !errors.As(err, &ps) || len(ps) == 0 {
		t.Fatalf("%s: %T %v, want Problems", name, err, err)
	}
	for _, p := range ps {
		if strings.TrimSpace(p.Message) == "" {
			t.Fatalf("%s: a problem without a message: %+v", name, p)
		}
		if p.File == "" {
			continue
		}
		if _, err := fs.Stat(fsys, p.File); err != nil {
			t.Fatalf("%s: problem %q names %s, which is not in the config", name, p, p.File)
		}
	}
}

// checkGraph: the levels hold every component once, each after its
// dependencies.
func checkGraph(t *testing.T, c *Config) {
	levels, err := c.Graph().Levels()
	if err != nil {
		t.Fatalf("a valid config's graph: %v", err)
	}
	level := map[string]int{}
	for i, l := range levels {
		for _, name := range l {
			if _, dup := level[name]; dup {
				t.Fatalf("%s is in two levels: %v", name, levels)
			}
			level[name] = i
		}
	}
	for _, cmp := range c.Components {
		l, ok := level[cmp.Name]
		if !ok {
			t.Fatalf("%s is in no level: %v", cmp.Name, levels)
		}
		for _, dep := range cmp.Dependencies {
			if level[dep] >= l {
				t.Fatalf("%s (level %d) depends on %s (level %d)", cmp.Name, l, dep, level[dep])
			}
		}
	}
}

// configJSON is what a config holds, as JSON.
func configJSON(t *testing.T, c *Config) []byte {
	data, err := json.Marshal(struct {
		App        App
		Sandbox    TerraformModule
		Module     *Module
		Inputs     []Input
		Components []*Component
		Actions    []*Action
		Files      []string
	}{c.App, c.Sandbox, c.Sandbox.Module, c.Inputs, c.Components, c.Actions, c.Files()})
	if err != nil {
		t.Fatalf("encode the config: %v", err)
	}
	return data
}

// FuzzReadArchive reads any bytes as a config archive: the error, if any,
// wraps ErrArchive; what it reads holds only valid paths inside the config,
// and packs (ArchiveDir) into an archive that reads back to the same files.
func FuzzReadArchive(f *testing.F) {
	for _, dir := range []string{exampleDir, "../examples/build-app"} {
		data, err := ArchiveDir(os.DirFS(dir), ".")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{})
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys, err := ReadArchive(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrArchive) {
				t.Fatalf("%T %v does not wrap ErrArchive", err, err)
			}
			return
		}
		files := archiveFiles(t, fsys)
		packed, err := ArchiveDir(fsys, ".")
		if err != nil {
			t.Fatalf("repack %v: %v", slices.Sorted(maps.Keys(files)), err)
		}
		back, err := ReadArchive(bytes.NewReader(packed))
		if err != nil {
			t.Fatalf("the repacked archive does not read: %v", err)
		}
		if got := archiveFiles(t, back); !equalFiles(got, files) {
			t.Fatalf("repacking changed the files from %v to %v", slices.Sorted(maps.Keys(files)), slices.Sorted(maps.Keys(got)))
		}
	})
}

type archived struct {
	data []byte
	exec bool
}

// archiveFiles lists the files of fsys, checking their paths.
func archiveFiles(t *testing.T, fsys fs.FS) map[string]archived {
	out := map[string]archived{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !fs.ValidPath(p) || skippedPath(p) {
			t.Fatalf("the archive yields the path %q", p)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		out[p] = archived{data, info.Mode()&0o111 != 0}
		return err
	})
	if err != nil {
		t.Fatalf("walk the archive's files: %v", err)
	}
	return out
}

func equalFiles(a, b map[string]archived) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || w.exec != v.exec || !bytes.Equal(w.data, v.data) {
			return false
		}
	}
	return true
}
