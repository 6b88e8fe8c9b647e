package helm

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/outpost-dev/outpost/protocol"
)

// countsForHealth says whether a kind's readiness counts for its
// component's health: the workloads and what they run. Services, config and
// the rest are there or not, which a plan's drift already shows.
func countsForHealth(kind string) bool {
	switch kind {
	case "Deployment", "StatefulSet", "DaemonSet", "Pod", "Job":
		return true
	}
	return false
}

// readiness is an object's health from its live content: Deployments,
// StatefulSets and DaemonSets are healthy with all their replicas updated
// and available, degraded with some available (or, for a Deployment, old
// replicas still beside the updated ones), unhealthy with none; Pods
// are healthy when Ready (or Succeeded); Jobs when Complete, unhealthy when
// Failed, degraded while they run.
func readiness(kind string, u map[string]any) (state, condition string) {
	if g, og := num(u, "metadata", "generation"), num(u, "status", "observedGeneration"); og < g && kind != "Pod" && kind != "Job" {
		return protocol.HealthDegraded, fmt.Sprintf("rollout in progress: generation %d not observed yet (at %d)", g, og)
	}
	switch kind {
	case "Deployment":
		if total, updated := num(u, "status", "replicas"), num(u, "status", "updatedReplicas"); total > updated && updated > 0 && num(u, "status", "availableReplicas") > 0 {
			// a rolling update whose new pods are not ready keeps the old ones
			// available: not healthy until they are gone
			why := fmt.Sprintf("rollout in progress: %d of %d replicas updated, %d available", updated, total, num(u, "status", "availableReplicas"))
			if c := falseCondition(u); c != "" {
				why = c + ": " + why
			}
			return protocol.HealthDegraded, why
		}
		return replicas(u, "Available", num(u, "spec", "replicas"), num(u, "status", "updatedReplicas"), num(u, "status", "availableReplicas"))
	case "StatefulSet":
		return replicas(u, "Ready", num(u, "spec", "replicas"), num(u, "status", "updatedReplicas"), num(u, "status", "readyReplicas"))
	case "DaemonSet":
		return replicas(u, "Available", num(u, "status", "desiredNumberScheduled"),
			num(u, "status", "updatedNumberScheduled"), num(u, "status", "numberAvailable"))
	case "Pod":
		return podReadiness(u)
	case "Job":
		return jobReadiness(u)
	}
	return protocol.HealthHealthy, ""
}

// replicas judges a workload by its replicas: want of them (the API server
// defaults spec.replicas to 1), updated ones and ready (or available) ones;
// the condition names the workload's own failing condition when it has one.
func replicas(u map[string]any, word string, want, updated, ready int64) (string, string) {
	if ready >= want && updated >= want {
		return protocol.HealthHealthy, ""
	}
	why := fmt.Sprintf("%d of %d replicas %s, %d updated", ready, want, lower(word), updated)
	if c := falseCondition(u); c != "" {
		why = c + ": " + why
	}
	if ready == 0 {
		return protocol.HealthUnhealthy, why
	}
	return protocol.HealthDegraded, why
}

func podReadiness(u map[string]any) (string, string) {
	phase, _, _ := unstructured.NestedString(u, "status", "phase")
	if phase == "Succeeded" {
		return protocol.HealthHealthy, ""
	}
	if phase == "Failed" {
		return protocol.HealthUnhealthy, "phase Failed"
	}
	for _, c := range conditions(u) {
		if c["type"] == "Ready" {
			if c["status"] == "True" {
				return protocol.HealthHealthy, ""
			}
			return protocol.HealthUnhealthy, describe(c)
		}
	}
	return protocol.HealthUnhealthy, "phase " + phase + ", no Ready condition yet"
}

func jobReadiness(u map[string]any) (string, string) {
	for _, c := range conditions(u) {
		if c["status"] != "True" {
			continue
		}
		switch c["type"] {
		case "Complete":
			return protocol.HealthHealthy, ""
		case "Failed":
			return protocol.HealthUnhealthy, describe(map[string]any{"type": "Failed", "status": "True", "reason": c["reason"], "message": c["message"]})
		}
	}
	return protocol.HealthDegraded, "not complete yet"
}

// falseCondition describes the first condition that is False (a
// Deployment's Available, a Progressing that timed out), or "".
func falseCondition(u map[string]any) string {
	for _, c := range conditions(u) {
		if c["status"] == "False" {
			return describe(c)
		}
	}
	return ""
}

// describe is a condition as "Type=Status (Reason): message".
func describe(c map[string]any) string {
	s := fmt.Sprintf("%v=%v", c["type"], c["status"])
	if r, _ := c["reason"].(string); r != "" {
		s += " (" + r + ")"
	}
	if m, _ := c["message"].(string); m != "" {
		s += ": " + strings.TrimSuffix(m, ".")
	}
	return s
}

func conditions(u map[string]any) []map[string]any {
	raw, _, _ := unstructured.NestedSlice(u, "status", "conditions")
	out := make([]map[string]any, 0, len(raw))
	for _, c := range raw {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// num is an integer field, 0 when absent.
func num(u map[string]any, path ...string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(u, path...)
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

func lower(s string) string {
	if s == "Available" {
		return "available"
	}
	return "ready"
}
