package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Field managers of the server-side applies the plugin makes: DriftManager
// only in dry runs (so it never owns a field), RepairManager for the applies
// that put an object back after a deploy (repairDrift).
const (
	DriftManager  = "outpost-drift"
	RepairManager = "outpost"
)

// liveObjects reaches the cluster's live objects through the dynamic client.
type liveObjects struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

// resource is the client of o's kind, in o's namespace when it has one.
func (l liveObjects) resource(o object) (dynamic.ResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("%s: apiVersion %q: %w", o.path(), o.APIVersion, err)
	}
	m, err := l.mapper.RESTMapping(gv.WithKind(o.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: the cluster does not serve %s: %w", o.path(), gv.WithKind(o.Kind), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return l.dyn.Resource(m.Resource).Namespace(o.Namespace), nil
	}
	return l.dyn.Resource(m.Resource), nil
}

// liveState is one object as the cluster holds it (nil: it does not) and
// as a server-side apply of the release's object would leave it.
type liveState struct {
	live, applied map[string]any
}

// drifted says the cluster's object is not what applying the release's
// would leave: a field the release sets was changed, or the object is gone.
func (s liveState) drifted() bool {
	return s.live == nil || !equalContent(s.live, s.applied)
}

// state reads o's live object and asks the API server what a forced
// server-side apply of o would make of it (a dry run, as `kubectl diff`
// does): fields the release does not set (a controller's annotation) stay
// as they are, so only a change of the release's own fields shows.
func (l liveObjects) state(ctx context.Context, o object) (liveState, error) {
	ri, err := l.resource(o)
	if err != nil {
		return liveState{}, err
	}
	live, err := ri.Get(ctx, o.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return liveState{applied: o.content}, nil
	}
	if err != nil {
		return liveState{}, fmt.Errorf("reading %s: %w", o.path(), err)
	}
	applied, err := l.apply(ctx, ri, o, DriftManager, true)
	if err != nil {
		return liveState{}, err
	}
	return liveState{live: clean(live.Object), applied: clean(applied)}, nil
}

// apply server-side applies o as manager, forcing conflicts (only as a dry
// run when dryRun), and returns what the API server made of it.
func (l liveObjects) apply(ctx context.Context, ri dynamic.ResourceInterface, o object, manager string, dryRun bool) (map[string]any, error) {
	content := copyMap(o.content)
	md, _ := content["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	if o.Namespace != "" {
		md["namespace"] = o.Namespace
	}
	content["metadata"] = md
	body, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	force := true
	opts := metav1.PatchOptions{Force: &force, FieldManager: manager}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	got, err := ri.Patch(ctx, o.Name, types.ApplyPatchType, body, opts)
	if err != nil {
		return nil, fmt.Errorf("server-side apply of %s (dry run %v): %w", o.path(), dryRun, err)
	}
	return got.Object, nil
}

// noise is what the API server keeps of an object that is not its content:
// every write changes it, or a controller writes it.
var noise = []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// lastApplied is kubectl's own bookkeeping, which may hold a Secret's
// values in plain text: never compared, never shown.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// clean is an object without the API server's bookkeeping and its status.
func clean(obj map[string]any) map[string]any {
	out := maps.Clone(obj)
	delete(out, "status")
	if md, ok := out["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		for _, k := range noise {
			delete(md, k)
		}
		if a, ok := md["annotations"].(map[string]any); ok {
			a = maps.Clone(a)
			delete(a, lastApplied)
			md["annotations"] = a
			if len(a) == 0 {
				delete(md, "annotations")
			}
		}
		out["metadata"] = md
	}
	return out
}

// equalContent compares two objects as JSON values (numbers as the API
// server wrote them).
func equalContent(a, b map[string]any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
