package helm

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/registry"
)

// rendered is what helm hands a post-renderer: a CronJob (its pod spec
// three levels down), a Pod with an ephemeral container and an image
// already in the install's registry, and a ConfigMap that mentions an
// image without running it.
const rendered = `---
# Source: shop/templates/cronjob.yaml
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
            - name: report
              image: "PUBLIC/acme/report:2"
---
# Source: shop/templates/pod.yaml
apiVersion: v1
kind: Pod
metadata:
  name: debug
spec:
  containers:
    - name: app
      image: INSTALL/outpost/api@sha256:0000000000000000000000000000000000000000000000000000000000000000
  ephemeralContainers:
    - name: shell
      image: PUBLIC/acme/report:2
---
# Source: shop/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  image:   "PUBLIC/acme/report:2"   # kept as written
`

func TestPostRendererRewritesPodSpecsOnly(t *testing.T) {
	public, err := registry.Start(context.Background(), registry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer public.Close()
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(public.Addr()+"/acme/report:2", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	const install = "registry.install.internal"
	in := strings.NewReplacer("PUBLIC", public.Addr(), "INSTALL", install).Replace(rendered)
	r, err := newRelocator(&protocol.HelmImages{Registry: protocol.RegistryAccess{Address: install}, Repository: "outpost/shop/images"})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	r.out = &logs
	out, err := postRenderer{ctx: context.Background(), r: r}.Run(bytes.NewBufferString(in))
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	want := install + "/outpost/shop/images/" + strings.ReplaceAll(public.Addr(), ":", "-") + "/acme/report@" + digest.String()
	if strings.Count(got, "image: "+want+"\n") != 2 {
		t.Errorf("want the CronJob's and the ephemeral container's images as %s:\n%s", want, got)
	}
	for _, kept := range []string{
		"# Source: shop/templates/cronjob.yaml\n", "# Source: shop/templates/pod.yaml\n",
		"image: " + install + "/outpost/api@sha256:" + strings.Repeat("0", 64) + "\n",
		// A document without a pod spec is kept byte for byte.
		"---\n# Source: shop/templates/configmap.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  image:   \"" + public.Addr() + "/acme/report:2\"   # kept as written\n",
	} {
		if !strings.Contains(got, kept) {
			t.Errorf("missing %q in:\n%s", kept, got)
		}
	}
	if strings.Count(logs.String(), "runs as "+want) != 1 {
		t.Errorf("want the image resolved once, logged:\n%s", logs.String())
	}
}
