package helm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/outpost-dev/outpost/protocol"
)

// object is one Kubernetes object of a release's manifest.
type object struct {
	protocol.HelmObject
	content map[string]any // the object as rendered
}

// key identifies an object across revisions: group, kind, namespace and
// name (a new API version of the same object is a change, not a new object).
func (o object) key() string {
	gv, _ := schema.ParseGroupVersion(o.APIVersion)
	return strings.Join([]string{gv.Group, o.Kind, o.Namespace, o.Name}, "/")
}

// path is how a diff names the object: <Kind>/<namespace>/<name>, or
// <Kind>/<name> for cluster-scoped objects.
func (o object) path() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// parseManifest splits a release's manifest into its objects, in manifest
// order. Namespaced objects without a namespace get the release's, as helm
// creates them; mapper (nil: none) tells namespaced kinds from cluster-scoped
// ones. A kind it does not know keeps the namespace it was written with.
func parseManifest(manifest, namespace string, mapper meta.RESTMapper) ([]object, error) {
	docs := releaseutil.SplitManifests(manifest)
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Compare(manifestIndex(a), manifestIndex(b))
	})
	var out []object
	for _, name := range names {
		var content map[string]any
		if err := yaml.Unmarshal([]byte(docs[name]), &content); err != nil {
			return nil, fmt.Errorf("reading the release's manifest: %w", err)
		}
		if len(content) == 0 {
			continue
		}
		o := object{content: content}
		o.APIVersion, _ = content["apiVersion"].(string)
		o.Kind, _ = content["kind"].(string)
		md, _ := content["metadata"].(map[string]any)
		o.Name, _ = md["name"].(string)
		o.Namespace, _ = md["namespace"].(string)
		if o.Namespace == "" && namespaced(mapper, o.APIVersion, o.Kind) {
			o.Namespace = namespace
		}
		out = append(out, o)
	}
	return out, nil
}

func manifestIndex(name string) int {
	var i int
	fmt.Sscanf(name, "manifest-%d", &i)
	return i
}

func namespaced(mapper meta.RESTMapper, apiVersion, kind string) bool {
	if mapper == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	m, err := mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	return err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace
}

// helmObjects are the objects' names, for outputs.
func helmObjects(objs []object) []protocol.HelmObject {
	out := make([]protocol.HelmObject, len(objs))
	for i, o := range objs {
		out[i] = o.HelmObject
	}
	return out
}
