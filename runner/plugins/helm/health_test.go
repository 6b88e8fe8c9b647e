package helm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins/helm"
)

// workload is a chart of one Deployment running the node's pause image;
// probe, when set, is its container's readiness probe (YAML, indented for
// the container).
func workload(t *testing.T, name, probe string) []byte {
	t.Helper()
	return chartArchive(t, name, map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
spec:
  replicas: 1
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: app
        image: ` + localcluster.PauseImage + `
        imagePullPolicy: Never
` + probe,
	})
}

// On a cluster whose node runs pods: a Deployment that is ready reads
// healthy; one whose readiness probe never passes reads unhealthy, naming
// the Deployment and its condition.
func TestHealthOfReleasesOnANode(t *testing.T) {
	c := localclustertest.StartWithNode(t, localcluster.NodeOptions{})
	e := &env{t: t, c: c, cs: kubernetes.NewForConfigOrDie(c.RESTConfig())}
	const ns = "health-node"
	e.createNamespace(ns)
	deploy := func(name, probe string) protocol.HealthTarget {
		m := e.manifest(protocol.HelmDeploy, ns, name)
		m.ChartArchive = workload(t, name, probe)
		succeed[protocol.HelmReleaseOutputs](t, m)
		return protocol.HealthTarget{Component: name, Release: name, Namespace: ns, Kubeconfig: string(c.Kubeconfig())}
	}
	good := deploy("good", "")
	bad := deploy("bad", `        readinessProbe:
          tcpSocket: {port: 9}
          periodSeconds: 1
`)

	if h := waitHealth(t, good, protocol.HealthHealthy); h.Object != "" || h.Condition != "" {
		t.Errorf("a ready Deployment: %+v; want healthy with no reason", h)
	}
	h := waitHealth(t, bad, protocol.HealthUnhealthy)
	if h.Component != "bad" || h.Object != "Deployment/"+ns+"/bad" ||
		!strings.Contains(h.Condition, "Available=False") || !strings.Contains(h.Condition, "0 of 1 replicas available") {
		t.Errorf("a Deployment whose readiness probe never passes: %+v; want unhealthy naming it and Available=False", h)
	}
	t.Logf("the probe that never passes reads: %+v", h)
	// It stays so: the pod runs, it is never ready.
	time.Sleep(5 * time.Second)
	if again := helm.ReadHealth(context.Background(), bad); again.State != protocol.HealthUnhealthy {
		t.Errorf("later: %+v; want still unhealthy", again)
	}
}

// On the API server alone: a release that is not there reads unknown and
// says why; a Deployment no controller has looked at yet is degraded (its
// rollout is in progress); a bad kubeconfig is unknown, never quoted.
func TestHealthWithoutANode(t *testing.T) {
	e := newEnv(t)
	const ns = "health-apiserver"
	e.createNamespace(ns)
	target := protocol.HealthTarget{Component: "web", Release: "web", Namespace: ns, Kubeconfig: string(e.c.Kubeconfig())}
	if h := helm.ReadHealth(context.Background(), target); h.State != protocol.HealthUnknown || !strings.Contains(h.Condition, "not found") {
		t.Errorf("a release that is not there: %+v; want unknown, not found", h)
	}
	m := e.manifest(protocol.HelmDeploy, ns, "web")
	m.ChartArchive = workload(t, "web", "")
	succeed[protocol.HelmReleaseOutputs](t, m)
	if h := helm.ReadHealth(context.Background(), target); h.State != protocol.HealthDegraded || h.Object != "Deployment/"+ns+"/web" ||
		!strings.Contains(h.Condition, "rollout in progress") {
		t.Errorf("a Deployment no controller saw: %+v; want degraded, rollout in progress", h)
	}
	bad := target
	bad.Kubeconfig = "token: s3cret-token\n: not yaml"
	if h := helm.ReadHealth(context.Background(), bad); h.State != protocol.HealthUnknown || strings.Contains(h.Condition, "s3cret") {
		t.Errorf("a bad kubeconfig: %+v; want unknown without quoting it", h)
	}
}

// waitHealth reads t's health until it is state (3 minutes at most).
func waitHealth(t *testing.T, target protocol.HealthTarget, state string) protocol.ComponentHealth {
	t.Helper()
	var h protocol.ComponentHealth
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if h = helm.ReadHealth(context.Background(), target); h.State == state {
			return h
		}
	}
	t.Fatalf("%s: health %+v after 3 minutes; want %s", target.Component, h, state)
	return h
}
