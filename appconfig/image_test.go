package appconfig

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

var testDigest = "sha256:" + strings.Repeat("0123456789abcdef", 4)

// imageRefCases: references Load accepts (want set) or refuses (err, part
// of the message).
var imageRefCases = []struct {
	ref  string
	want ImageReference
	err  string
}{
	{ref: "ghcr.io/acme/api:1.4.2", want: ImageReference{Registry: "ghcr.io", Repository: "acme/api", Tag: "1.4.2"}},
	{ref: "docker.io/library/nginx:1.27-alpine", want: ImageReference{Registry: "docker.io", Repository: "library/nginx", Tag: "1.27-alpine"}},
	{ref: "ghcr.io/acme/api@" + testDigest, want: ImageReference{Registry: "ghcr.io", Repository: "acme/api", Digest: testDigest}},
	{ref: "ghcr.io/acme/api:1.4.2@" + testDigest, want: ImageReference{Registry: "ghcr.io", Repository: "acme/api", Tag: "1.4.2", Digest: testDigest}},
	{ref: "127.0.0.1:5000/shop/api:dev", want: ImageReference{Registry: "127.0.0.1:5000", Repository: "shop/api", Tag: "dev"}},
	{ref: "localhost:5000/api:v1", want: ImageReference{Registry: "localhost:5000", Repository: "api", Tag: "v1"}},
	{ref: "localhost/api:v1", want: ImageReference{Registry: "localhost", Repository: "api", Tag: "v1"}},
	{ref: "registry:5000/api:v1", want: ImageReference{Registry: "registry:5000", Repository: "api", Tag: "v1"}},
	{ref: "[::1]:5000/api:v1", want: ImageReference{Registry: "[::1]:5000", Repository: "api", Tag: "v1"}},
	{ref: "my-registry.example.com/a/b/c__d.e-f:V1_2.3", want: ImageReference{Registry: "my-registry.example.com", Repository: "a/b/c__d.e-f", Tag: "V1_2.3"}},

	{ref: "", err: "must be an image reference"},
	{ref: "nginx:1.27", err: `write the reference in full, e.g. "docker.io/library/nginx:1.27"`},
	{ref: "acme/api:1", err: `e.g. "docker.io/acme/api:1"`},
	{ref: "ghcr.io/acme/api", err: "has neither tag nor digest"},
	{ref: "ghcr.io/acme/api:", err: `the tag ""`},
	{ref: "ghcr.io/acme/api:.hidden", err: `the tag ".hidden"`},
	{ref: "ghcr.io/acme/api@sha256:ABC", err: "must be sha256: and 64 lowercase hex digits"},
	{ref: "ghcr.io/acme/api@md5:" + strings.Repeat("0", 32), err: "must be sha256:"},
	{ref: "ghcr.io/acme/API:1", err: "each part must be lowercase letters and digits"},
	{ref: "ghcr.io/acme//api:1", err: "each part must be"},
	{ref: "ghcr.io/acme/api-:1", err: "each part must be"},
	{ref: "ghcr.io/:1", err: "names no repository"},
	{ref: "ghcr..io/acme/api:1", err: `"ghcr..io" is not a registry host`},
	{ref: "ghcr.io:port/acme/api:1", err: "is not a registry host"},
	{ref: "docker://ghcr.io/acme/api:1", err: "no scheme"},
	{ref: " ghcr.io/acme/api:1", err: "no spaces"},
	{ref: "ghcr.io/acme/api:{{ .install.id }}", err: "templates are not supported here"},
	{ref: "ghcr.io/" + strings.Repeat("a", 256) + ":1", err: "longer than 255"},
}

func TestParseImageReference(t *testing.T) {
	for _, tc := range imageRefCases {
		got, err := ParseImageReference(tc.ref)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %+v, %v; want an error containing %q", tc.ref, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %+v, %v; want %+v", tc.ref, got, err, tc.want)
			continue
		}
		if got.String() != tc.ref {
			t.Errorf("%q: String() = %q", tc.ref, got.String())
		}
	}
}

// TestImagePatternMatchesParser: the schema's pattern for
// container_image.image is the parser's grammar, and agrees with it on every
// case (the repository's length aside, which a pattern does not count).
func TestImagePatternMatchesParser(t *testing.T) {
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Pattern string `json:"pattern"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if got := s.Defs["container_image"].Properties["image"].Pattern; got != imageRefPatt {
		t.Fatalf("the schema's image pattern\n%s\nis not the parser's\n%s", got, imageRefPatt)
	}
	componentFile := compileSchema(t, "#/$defs/component_file")
	for _, tc := range imageRefCases {
		if strings.Contains(tc.err, "longer than") {
			continue
		}
		_, perr := ParseImageReference(tc.ref)
		if imageRefRE.MatchString(tc.ref) != (perr == nil) {
			t.Errorf("%q: the pattern and the parser disagree (parser: %v)", tc.ref, perr)
		}
		doc := map[string]any{"name": "img", "type": "container_image", "image": tc.ref}
		if err := componentFile.Validate(doc); (err == nil) != (perr == nil) {
			t.Errorf("%q: the schema says %v, the parser %v", tc.ref, err, perr)
		}
	}
}

func TestImageComponentPlainHTTP(t *testing.T) {
	f := mixed()
	f["components/api_image.toml"] = file("name = \"api_image\"\ntype = \"container_image\"\nimage = \"127.0.0.1:5000/acme/api@" + testDigest + "\"\nplain_http = true\n")
	c := load(t, f)
	img, _ := c.Component("api_image")
	if !img.Image.PlainHTTP || img.Image.Reference.Digest != testDigest || img.Image.Reference.Name() != "127.0.0.1:5000/acme/api" {
		t.Errorf("image = %+v", img.Image)
	}
}
