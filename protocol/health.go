package protocol

// Component health (docs/architecture/health.md): the gateway hands a
// runner what to check (RunnerHeartbeatResponse.Health, only when it differs
// from the version the runner holds), the runner reads each component's
// objects in the install's cluster every HealthSpec.IntervalMS and sends, on
// its next heartbeat, only the components whose health changed
// (RunnerHeartbeatRequest.Health).

// Health states, from best to worst (an install's is its worst component's).
const (
	HealthHealthy   = "healthy"
	HealthDegraded  = "degraded"
	HealthUnknown   = "unknown"
	HealthUnhealthy = "unhealthy"
)

// HealthRank orders states from best (0) to worst; an unknown state ranks
// as unknown.
func HealthRank(state string) int {
	switch state {
	case HealthHealthy:
		return 0
	case HealthDegraded:
		return 1
	case HealthUnhealthy:
		return 3
	}
	return 2
}

// HealthSpecNone is the HealthSpec version a runner sends before it has
// one.
const HealthSpecNone = "none"

// HealthSpec is what a runner checks. Version names it: the runner sends it
// back (RunnerHeartbeatRequest.HealthSpec) and gets a new spec only when it
// changed. It holds kubeconfigs (secret): the runner keeps it in memory only.
type HealthSpec struct {
	Version    string         `json:"version"`
	IntervalMS int64          `json:"interval_ms"`
	Components []HealthTarget `json:"components,omitempty"`
}

// HealthTarget is one helm component: its release in the cluster of
// Kubeconfig, as its latest deploy left it.
type HealthTarget struct {
	Component  string `json:"component"`
	Release    string `json:"release"`
	Namespace  string `json:"namespace"`
	Kubeconfig string `json:"kubeconfig"`
}

// ComponentHealth is one component's health as the runner read it: its
// state and, unless healthy, why (the worst object and its condition).
type ComponentHealth struct {
	Component string `json:"component"`
	State     string `json:"state"`
	// Object is the object that decided the state ("Deployment/ns/web").
	Object string `json:"object,omitempty"`
	// Condition is why ("Available=False: 0 of 1 replicas available").
	Condition string `json:"condition,omitempty"`
}
