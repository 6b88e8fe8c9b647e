package migrations

import (
	"time"
)

// v34 adds exclusive action runs (a run that holds the install's lock says
// so) and health results of health-check actions beside the runner's
// readings: a component health row's source, and when it stops counting.
var v34 = steps(
	add("action_runs", &v34ActionRun{}, "Exclusive"),
	add("component_health", &v34ComponentHealth{}, "Source", "StaleAfter"),
)

type v34ActionRun struct {
	Exclusive bool `gorm:"not null;default:false"`
}

type v34ComponentHealth struct {
	Source     string `gorm:"size:120;not null;default:''"`
	StaleAfter *time.Time
}
