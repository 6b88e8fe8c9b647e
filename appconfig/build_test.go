package appconfig

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/outpost-dev/outpost/contract"
)

// writeFS writes files to a new directory, each with mode, and returns it.
func writeFS(t *testing.T, files fstest.MapFS, mode os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	for name, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
	return dir
}

func buildInputs(t *testing.T, dir string) map[string]BuildInput {
	t.Helper()
	c, err := Load(os.DirFS(dir))
	if err != nil {
		t.Fatalf("load %s: %v", dir, err)
	}
	out := map[string]BuildInput{}
	for _, name := range c.ComponentNames() {
		out[name] = buildInput(t, c, name)
	}
	return out
}

var digestFormat = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// TestBuildInputDigests: a component's build input digest depends on its
// type and content only: not on file times or permissions (other than the
// executable bit), nor on where the config was read from; editing what a
// build packs changes it, and only that component's.
func TestBuildInputDigests(t *testing.T) {
	files := mixed()
	dir1 := writeFS(t, files, 0o644)
	dir2 := writeFS(t, files, 0o600)
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	filepath.Walk(dir2, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })

	first, second := buildInputs(t, dir1), buildInputs(t, dir2)
	for name, in := range first {
		if !digestFormat.MatchString(in.Digest) {
			t.Errorf("%s: digest %q", name, in.Digest)
		}
		if in.Digest != second[name].Digest || !bytes.Equal(in.Source, second[name].Source) {
			t.Errorf("%s: two copies of the same config give other build inputs", name)
		}
	}

	// What each type consumes.
	fe, img, db := first["frontend"], first["api_image"], first["db"]
	if fe.Type != contract.TypeHelmChart || fe.Image != "" {
		t.Errorf("frontend = %+v", fe)
	}
	c := load(t, files)
	chart, err := c.ChartArchive("charts/web")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fe.Source, chart) {
		t.Error("a helm component's build source is not its chart archive")
	}
	if e := entries(t, chart); len(e) != 4 || e[0].Name != "Chart.yaml" || e[1].Name != "templates/" || e[3].Name != "values.yaml" {
		t.Errorf("chart archive = %+v", e)
	}
	module, _ := c.ModuleArchive("modules/db")
	if db.Type != contract.TypeTerraformModule || !bytes.Equal(db.Source, module) {
		t.Errorf("db = %+v", db)
	}
	if img.Type != contract.TypeContainerImage || img.Source != nil || img.Image != "ghcr.io/acme/api:1.4.2" || img.PlainHTTP {
		t.Errorf("api_image = %+v", img)
	}
	sum := sha256.Sum256([]byte("container_image\nghcr.io/acme/api:1.4.2"))
	if img.Digest != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("image digest = %s", img.Digest)
	}

	// Touching a chart file changes nothing.
	now := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir1, "charts/web/values.yaml"), now, now); err != nil {
		t.Fatal(err)
	}
	if got := buildInputs(t, dir1)["frontend"]; got.Digest != fe.Digest || !bytes.Equal(got.Source, fe.Source) {
		t.Error("touching a chart file changed the build input")
	}

	// Editing a values file (a deploy setting) or the component's file
	// changes no build input.
	writeTree(t, dir1, map[string]string{"values/prod.yaml": "replicaCount: 5\n"})
	writeTree(t, dir1, map[string]string{"components/frontend.toml": strings.Replace(string(files["components/frontend.toml"].Data), `timeout = "7m30s"`, `timeout = "1m"`, 1)})
	if got := buildInputs(t, dir1)["frontend"]; got.Digest != fe.Digest {
		t.Error("deploy settings changed the build input")
	}

	// Editing the chart's content changes its digest, and no other.
	writeTree(t, dir1, map[string]string{"charts/web/values.yaml": "replicaCount: 3\n"})
	edited := buildInputs(t, dir1)
	if edited["frontend"].Digest == fe.Digest {
		t.Error("editing the chart kept its digest")
	}
	for _, name := range []string{"api_image", "db", "web"} {
		if edited[name].Digest != first[name].Digest {
			t.Errorf("editing the chart changed %s's digest", name)
		}
	}
	// So does a new file, and making a file executable.
	writeTree(t, dir1, map[string]string{"charts/web/templates/NOTES.txt": "hi\n"})
	added := buildInputs(t, dir1)["frontend"].Digest
	if added == edited["frontend"].Digest {
		t.Error("adding a file kept the digest")
	}
	if err := os.Chmod(filepath.Join(dir1, "charts/web/templates/NOTES.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if buildInputs(t, dir1)["frontend"].Digest == added {
		t.Error("making a file executable kept the digest")
	}

	// An image's digest follows its reference, not how its registry is
	// reached.
	writeTree(t, dir1, map[string]string{"components/api_image.toml": "name = \"api_image\"\ntype = \"container_image\"\nimage = \"ghcr.io/acme/api:1.4.2\"\nplain_http = true\n"})
	if got := buildInputs(t, dir1)["api_image"]; got.Digest != img.Digest || !got.PlainHTTP {
		t.Errorf("plain_http: %+v", got)
	}
	writeTree(t, dir1, map[string]string{"components/api_image.toml": "name = \"api_image\"\ntype = \"container_image\"\nimage = \"ghcr.io/acme/api:1.4.3\"\n"})
	if buildInputs(t, dir1)["api_image"].Digest == img.Digest {
		t.Error("a new tag kept the image's digest")
	}
}

// TestBuildInputDigestNamesType: one directory built as a module and as a
// chart gives two digests.
func TestBuildInputDigestNamesType(t *testing.T) {
	f := mixed()
	f["charts/web/main.tf"] = file("output \"x\" { value = 1 }\n")
	f["components/web_tf.toml"] = file("name = \"web_tf\"\ntype = \"terraform_module\"\nsource = \"charts/web\"\n")
	c := load(t, f)
	tf, helm := buildInput(t, c, "web_tf"), buildInput(t, c, "frontend")
	if !bytes.Equal(tf.Source, helm.Source) || tf.Digest == helm.Digest {
		t.Errorf("same source: %v; digests %s %s", bytes.Equal(tf.Source, helm.Source), tf.Digest, helm.Digest)
	}
	if _, err := c.BuildInput("nope"); err == nil {
		t.Error("build input of no component: no error")
	}
}

// TestBuildInputDigestIsStable pins the digest of a small chart: it must
// not change from one release of Outpost (or Go) to the next, or every
// component would look changed after an upgrade.
func TestBuildInputDigestIsStable(t *testing.T) {
	f := base()
	f["charts/web/Chart.yaml"] = file("apiVersion: v2\nname: web\nversion: 0.1.0\n")
	f["charts/web/templates/cm.yaml"] = file("kind: ConfigMap\n")
	f["charts/web/run.sh"] = &fstest.MapFile{Data: []byte("#!/bin/sh\n"), Mode: 0o755, ModTime: time.Now()}
	f["components/web2.toml"] = file("name = \"web2\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\n")
	c := load(t, f)
	in := buildInput(t, c, "web2")
	const want = "sha256:3d4e15fcffaca156a6ddc219647418cda52648039b472f9c0455095b361687bc"
	if in.Digest != want {
		t.Errorf("digest = %s, want %s", in.Digest, want)
	}
	// It is the digest of the type and the uncompressed tar.
	gz, err := gzip.NewReader(bytes.NewReader(in.Source))
	if err != nil {
		t.Fatal(err)
	}
	tarStream, _ := io.ReadAll(gz)
	if sum := sha256.Sum256(append([]byte("helm_chart\n"), tarStream...)); "sha256:"+hex.EncodeToString(sum[:]) != in.Digest {
		t.Error("the digest is not sha256(type + \"\\n\" + tar)")
	}
	again, _ := c.ChartArchive("charts/web")
	if !bytes.Equal(in.Source, again) {
		t.Error("two archives of one chart differ")
	}
}

// TestArchiveNormalisesModes: permissions other than the executable bit
// and owners do not reach the archive.
func TestArchiveNormalisesModes(t *testing.T) {
	files := fstest.MapFS{
		"a.txt":   {Data: []byte("a"), Mode: 0o600, ModTime: time.Unix(1e9, 0)},
		"d/b.txt": {Data: []byte("b"), Mode: 0o664},
		"x.sh":    {Data: []byte("x"), Mode: 0o700},
	}
	a, err := ArchiveDir(files, ".")
	if err != nil {
		t.Fatal(err)
	}
	files["a.txt"].Mode, files["a.txt"].ModTime = 0o644, time.Time{}
	files["d/b.txt"].Mode = 0o444
	files["x.sh"].Mode = 0o755
	b, _ := ArchiveDir(files, ".")
	if !bytes.Equal(a, b) {
		t.Error("modes or times changed the archive")
	}
	for _, e := range entries(t, a) {
		if want := map[string]int64{"a.txt": 0o644, "d/": 0o755, "d/b.txt": 0o644, "x.sh": 0o755}[e.Name]; e.Mode != want || e.Uid != 0 || e.ModTime.Unix() != 0 {
			t.Errorf("%s: mode %o uid %d time %v", e.Name, e.Mode, e.Uid, e.ModTime)
		}
	}
}

// A component's build key is its build input without the source, worked out
// once per loaded config: asked again, it packs nothing; nor for another
// component of the same type that packs the same directory.
func TestBuildKey(t *testing.T) {
	f := base()
	f["charts/web/Chart.yaml"] = file("apiVersion: v2\nname: web\nversion: 0.1.0\n")
	f["charts/web/templates/cm.yaml"] = file("kind: ConfigMap\n" + strings.Repeat("# padding\n", 1000))
	f["components/web2.toml"] = file("name = \"web2\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\n")
	f["components/web3.toml"] = file("name = \"web3\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\n")
	c := load(t, f)
	in := buildInput(t, c, "web2")
	key, err := c.BuildKey("web2")
	if err != nil {
		t.Fatal(err)
	}
	if key.Type != in.Type || key.Digest != in.Digest || key.Image != in.Image || key.Source != nil {
		t.Errorf("build key %+v, want the build input's type %s and digest %s, no source", key, in.Type, in.Digest)
	}
	// (Packing it allocates hundreds of times; the lookup, its key.)
	if allocs := testing.AllocsPerRun(10, func() { _, _ = c.BuildKey("web2") }); allocs > 2 {
		t.Errorf("asking again allocates %.0f times: the directory was packed again", allocs)
	}
	if other, _ := c.BuildKey("web3"); other.Type != key.Type || other.Digest != key.Digest {
		t.Errorf("web3's key %+v, web2's %+v: same type, same directory", other, key)
	}
	if n := len(c.builds.done); n != 1 {
		t.Errorf("%d keys worked out for two components packing one directory, want 1", n)
	}
	if _, err := c.BuildKey("nope"); err == nil || !strings.Contains(err.Error(), `no component "nope"`) {
		t.Errorf("build key of a component that does not exist: %v", err)
	}
}

// A chart's build copies the images it lists (relocate_images): the list
// is part of its build input and key, so that changing it builds again; a
// chart listing none keeps the digest it had.
func TestBuildInputOfAChartListingImages(t *testing.T) {
	f := base()
	f["charts/web/Chart.yaml"] = file("apiVersion: v2\nname: web\nversion: 0.1.0\n")
	f["components/plain.toml"] = file("name = \"plain\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\n")
	f["components/all.toml"] = file("name = \"all\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\nrelocate_images = true\n")
	f["components/nginx.toml"] = file("name = \"nginx\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\nrelocate_images = true\n" +
		"images = [\"docker.io/library/nginx:1.27\"]\n")
	f["components/redis.toml"] = file("name = \"redis\"\ntype = \"helm_chart\"\nsource = \"charts/web\"\nrelocate_images = true\n" +
		"images = [\"docker.io/library/redis:7\"]\n")
	c := load(t, f)
	in := map[string]BuildInput{}
	for _, n := range []string{"plain", "all", "nginx", "redis"} {
		key, err := c.BuildKey(n)
		if err != nil {
			t.Fatal(err)
		}
		full, _ := c.BuildInput(n)
		if key.Digest != full.Digest || strings.Join(key.Images, ",") != strings.Join(full.Images, ",") {
			t.Errorf("%s: key %+v, build input digest %s images %v", n, key, full.Digest, full.Images)
		}
		in[n] = key
	}
	if in["all"].Digest != in["plain"].Digest || in["all"].Images != nil {
		t.Errorf("a chart relocating every image, listing none: %+v; want the plain chart's digest %s, no images", in["all"], in["plain"].Digest)
	}
	if in["nginx"].Digest == in["plain"].Digest || in["nginx"].Digest == in["redis"].Digest ||
		strings.Join(in["nginx"].Images, ",") != "docker.io/library/nginx:1.27" {
		t.Errorf("charts listing images: nginx %+v, redis %+v, plain %s; want the list in each one's images and digest", in["nginx"], in["redis"], in["plain"].Digest)
	}
}

// buildInput is the build input of component name of c.
func buildInput(t *testing.T, c *Config, name string) BuildInput {
	t.Helper()
	in, err := c.BuildInput(name)
	if err != nil {
		t.Fatalf("build input of %s: %v", name, err)
	}
	return in
}
