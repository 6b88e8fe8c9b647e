package helm

import (
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// Each kind's readiness from its live status, as the controllers and the
// kubelet write it (the node test sees Deployments through a real one).
func TestReadinessOfEachKind(t *testing.T) {
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason}
	}
	obj := func(spec, status map[string]any) map[string]any {
		return map[string]any{"metadata": map[string]any{"generation": int64(2)}, "spec": spec, "status": status}
	}
	for _, c := range []struct {
		name, kind string
		u          map[string]any
		state      string
		why        string
	}{
		{"statefulset ready", "StatefulSet", obj(map[string]any{"replicas": int64(2)},
			map[string]any{"observedGeneration": int64(2), "readyReplicas": int64(2), "updatedReplicas": int64(2)}), protocol.HealthHealthy, ""},
		{"statefulset half ready", "StatefulSet", obj(map[string]any{"replicas": int64(2)},
			map[string]any{"observedGeneration": int64(2), "readyReplicas": int64(1), "updatedReplicas": int64(2)}), protocol.HealthDegraded, "1 of 2 replicas ready, 2 updated"},
		{"deployment mid-update", "Deployment", obj(map[string]any{"replicas": int64(3)},
			map[string]any{"observedGeneration": int64(2), "availableReplicas": int64(3), "updatedReplicas": int64(1)}), protocol.HealthDegraded, "3 of 3 replicas available, 1 updated"},
		{"deployment stuck on a new pod not ready", "Deployment", obj(map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "availableReplicas": int64(1), "updatedReplicas": int64(1),
				"conditions": []any{cond("Available", "True", ""), cond("Progressing", "False", "ProgressDeadlineExceeded")}}),
			protocol.HealthDegraded, "Progressing=False (ProgressDeadlineExceeded): rollout in progress: 1 of 2 replicas updated, 1 available"},
		{"deployment not observed", "Deployment", obj(map[string]any{"replicas": int64(1)},
			map[string]any{"observedGeneration": int64(1), "availableReplicas": int64(1), "updatedReplicas": int64(1)}), protocol.HealthDegraded, "rollout in progress"},
		{"daemonset none available", "DaemonSet", obj(nil, map[string]any{"observedGeneration": int64(2), "desiredNumberScheduled": int64(1),
			"updatedNumberScheduled": int64(1), "numberAvailable": int64(0)}), protocol.HealthUnhealthy, "0 of 1 replicas available"},
		{"pod not ready", "Pod", map[string]any{"status": map[string]any{"phase": "Running",
			"conditions": []any{cond("Ready", "False", "ContainersNotReady")}}}, protocol.HealthUnhealthy, "Ready=False (ContainersNotReady)"},
		{"pod succeeded", "Pod", map[string]any{"status": map[string]any{"phase": "Succeeded"}}, protocol.HealthHealthy, ""},
		{"job complete", "Job", map[string]any{"status": map[string]any{"conditions": []any{cond("Complete", "True", "")}}}, protocol.HealthHealthy, ""},
		{"job failed", "Job", map[string]any{"status": map[string]any{"conditions": []any{cond("Failed", "True", "BackoffLimitExceeded")}}},
			protocol.HealthUnhealthy, "Failed=True (BackoffLimitExceeded)"},
		{"job running", "Job", map[string]any{"status": map[string]any{"active": int64(1)}}, protocol.HealthDegraded, "not complete yet"},
	} {
		state, why := readiness(c.kind, c.u)
		if state != c.state || !strings.Contains(why, c.why) || (c.why == "" && why != "") {
			t.Errorf("%s: %s %q; want %s %q", c.name, state, why, c.state, c.why)
		}
	}
}
