package charts_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// By default the runner runs as root with only the capabilities running
// jobs as other uids needs, its jobs as uids of their own (--job-user), and
// the pod's service-account token is mounted where only the runner reads it
// (0600, the runAsUser's: root's). With runner.jobUser "" it is the
// non-root runner of before: uid 65532, no capabilities, no --job-user.
func TestJobsRunAsOtherUIDsThanTheRunner(t *testing.T) {
	e := newEnv(t)
	base := map[string]any{"gateway": map[string]any{"url": "https://outpost.example.com"}, "token": map[string]any{"value": "oprg_chart-test-token"}}
	if err := e.install("outpost-jobuser", base); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	pod, c := e.podSpec("outpost-jobuser")
	if psc := pod.SecurityContext; psc == nil || psc.RunAsUser == nil || *psc.RunAsUser != 0 || psc.RunAsNonRoot == nil || *psc.RunAsNonRoot ||
		psc.FSGroup != nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v; want root, no fsGroup, RuntimeDefault seccomp", psc)
	}
	sc := c.SecurityContext
	want := []corev1.Capability{"CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETGID", "SETUID"}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Privileged != nil && *sc.Privileged || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
		!slices.Equal(sc.Capabilities.Add, want) {
		t.Errorf("container security context %+v (capabilities %+v); want no escalation, a read-only root, ALL dropped and only %v added", sc, sc.Capabilities, want)
	}
	env := envOf(c)
	for k, v := range map[string]string{"OUTPOST_JOB_USER": "10000-10999", "OUTPOST_WORK_DIR": "/var/lib/outpost-runner",
		"OUTPOST_TOKEN_FILE": "/var/lib/outpost-runner/runner-token"} {
		if env[k].Value != v {
			t.Errorf("%s=%q, want %q", k, env[k].Value, v)
		}
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the service-account token is mounted the default way, not the chart's")
	}
	var projected, mounted bool
	for _, v := range pod.Volumes {
		if p := v.Projected; v.Name == "kube-api-access" && p != nil && len(p.Sources) == 3 && p.Sources[0].ServiceAccountToken != nil {
			projected = p.Sources[0].ServiceAccountToken.Path == "token"
		}
	}
	for _, m := range c.VolumeMounts {
		mounted = mounted || m.Name == "kube-api-access" && m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount" && m.ReadOnly
	}
	if !projected || !mounted {
		t.Errorf("the service-account token volume: projected %v, mounted read-only where client-go reads it %v", projected, mounted)
	}

	base["runner"] = map[string]any{"jobUser": ""}
	if err := e.install("outpost-nonroot", base); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	pod, c = e.podSpec("outpost-nonroot")
	if psc := pod.SecurityContext; psc == nil || psc.RunAsUser == nil || *psc.RunAsUser != 65532 || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("without a job user, pod security context %+v; want uid 65532, non-root", psc)
	}
	if sc := c.SecurityContext; sc == nil || sc.Capabilities == nil || len(sc.Capabilities.Add) != 0 || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("without a job user, container security context %+v; want every capability dropped", sc)
	}
	if v, ok := envOf(c)["OUTPOST_JOB_USER"]; ok {
		t.Errorf("without a job user, OUTPOST_JOB_USER=%q", v.Value)
	}
}

// podSpec is the runner Deployment's pod spec and its container.
func (e *env) podSpec(ns string) (corev1.PodSpec, corev1.Container) {
	e.t.Helper()
	c := e.container(ns, "outpost-runner")
	d, err := e.cs.AppsV1().Deployments(ns).Get(context.Background(), "outpost-runner", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return d.Spec.Template.Spec, c
}
