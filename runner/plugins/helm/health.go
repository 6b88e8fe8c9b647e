package helm

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/outpost-dev/outpost/protocol"
)

// ReadHealth reads a helm component's health (docs/architecture/health.md):
// the readiness of each object of its release's deployed revision, as the
// cluster holds it now. The component is as healthy as its worst object; one
// it cannot read (the cluster, the release, an object's kind) is unknown,
// and the reason says what failed. Errors never quote the kubeconfig.
func ReadHealth(ctx context.Context, t protocol.HealthTarget) protocol.ComponentHealth {
	h := readHealth(ctx, t)
	h.Component = t.Component
	return h
}

func readHealth(ctx context.Context, t protocol.HealthTarget) protocol.ComponentHealth {
	unknown := func(format string, a ...any) protocol.ComponentHealth {
		return protocol.ComponentHealth{State: protocol.HealthUnknown, Object: "release/" + t.Namespace + "/" + t.Release,
			Condition: fmt.Sprintf(format, a...)}
	}
	raw, err := parseKubeconfig(t.Kubeconfig)
	if err != nil {
		return unknown("%v", err)
	}
	getter, err := newKubeGetter(raw, t.Namespace)
	if err != nil {
		return unknown("%v", err)
	}
	cfg := new(action.Configuration)
	if err := cfg.Init(getter, t.Namespace, storageDriver, func(string, ...any) {}); err != nil {
		return unknown("helm: %v", err)
	}
	rel, err := action.NewGet(cfg).Run(t.Release)
	if err != nil {
		return unknown("reading the release: %v", err)
	}
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return unknown("discovering the cluster's API: %v", err)
	}
	dyn, err := dynamic.NewForConfig(getter.config)
	if err != nil {
		return unknown("kubeconfig: %v", err)
	}
	objs, err := parseManifest(rel.Manifest, t.Namespace, mapper)
	if err != nil {
		return unknown("%v", err)
	}
	return worstOf(ctx, liveObjects{dyn: dyn, mapper: mapper}, objs)
}

// worstOf reads each object whose readiness counts and returns the worst
// health among them (the first of the worst, in manifest order).
func worstOf(ctx context.Context, live liveObjects, objs []object) protocol.ComponentHealth {
	worst := protocol.ComponentHealth{State: protocol.HealthHealthy}
	for _, o := range objs {
		if !countsForHealth(o.Kind) {
			continue
		}
		h := objectHealth(ctx, live, o)
		if protocol.HealthRank(h.State) > protocol.HealthRank(worst.State) {
			worst = h
		}
	}
	return worst
}

// objectHealth reads one object's readiness.
func objectHealth(ctx context.Context, live liveObjects, o object) protocol.ComponentHealth {
	h := protocol.ComponentHealth{Object: o.path()}
	res, err := live.resource(o)
	if err == nil {
		var u map[string]any
		obj, gerr := res.Get(ctx, o.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(gerr):
			h.State, h.Condition = protocol.HealthUnhealthy, "not found in the cluster"
			return h
		case gerr != nil:
			err = gerr
		default:
			u = obj.Object
			h.State, h.Condition = readiness(o.Kind, u)
			return h
		}
	}
	h.State, h.Condition = protocol.HealthUnknown, err.Error()
	return h
}
