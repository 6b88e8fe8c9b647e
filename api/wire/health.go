package wire

import "time"

// InstallHealthSummary is an install's health (docs/architecture/health.md): the worst of
// its components', or unknown while its runner is offline or before any
// component reported.
type InstallHealthSummary struct {
	State string `json:"state" required:"true" enum:"healthy,degraded,unhealthy,unknown"`
	// when it took this state, as far as is known (null: never reported)
	Since *time.Time `json:"since" nullable:"true"`
	// why: the component, object and condition that decided it
	Component string `json:"component,omitempty"`
	Object    string `json:"object,omitempty"`
	Condition string `json:"condition,omitempty"`
}

// ComponentHealth is one component's health as its runner last read it (a
// helm release) or a health-check action last found it (a component the
// action names, or the action's own check "action:<name>"); unknown while
// the runner is offline, and an action's result once past stale_after.
type ComponentHealth struct {
	Component string    `json:"component" required:"true"`
	State     string    `json:"state" required:"true" enum:"healthy,degraded,unhealthy,unknown"`
	Since     time.Time `json:"since" required:"true"`
	// the object whose readiness decided the state, as Kind/namespace/name
	Object string `json:"object,omitempty"`
	// why, as Type=Status (Reason): message, or what could not be read
	Condition  string    `json:"condition,omitempty"`
	ReportedAt time.Time `json:"reported_at" required:"true"`
	// "" for the runner's reading of a helm release; "action:<name>" for a
	// health-check action's result
	Source string `json:"source,omitempty"`
	// when an action's result reads unknown without a newer one (its
	// third scheduled run after it, plus a step's timeout)
	StaleAfter *time.Time `json:"stale_after,omitempty"`
}

// HealthTransition is one change of a component's state.
type HealthTransition struct {
	Component string `json:"component" required:"true"`
	// "" for its first report
	From      string    `json:"from"`
	To        string    `json:"to" required:"true"`
	Object    string    `json:"object,omitempty"`
	Condition string    `json:"condition,omitempty"`
	At        time.Time `json:"at" required:"true"`
}

// InstallHealth is GET /installs/{id}/health: the install's health, its
// components' and their latest transitions, newest first.
type InstallHealth struct {
	InstallID   string               `json:"install_id" required:"true"`
	Health      InstallHealthSummary `json:"health" required:"true"`
	Components  []ComponentHealth    `json:"components" required:"true"`
	Transitions []HealthTransition   `json:"transitions" required:"true"`
}
