package store

import (
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/protocol"
)

// worstComponent is the worst of an install's components as stored (ties:
// the one in that state longest); State "" when none has reported.
func worstComponent(tx *gorm.DB, installID string) (ComponentHealth, error) {
	var rows []ComponentHealth
	if err := tx.Where("install_id = ?", installID).Order("component").Find(&rows).Error; err != nil {
		return ComponentHealth{}, err
	}
	var worst ComponentHealth
	for _, c := range rows {
		r, w := protocol.HealthRank(c.State), protocol.HealthRank(worst.State)
		if worst.State == "" || r > w || (r == w && c.Since.Before(worst.Since)) {
			worst = c
		}
	}
	return worst, nil
}

// queueHealthChanged writes health.changed to the outbox, in the report's
// transaction, when the install's health (its worst component's state)
// went from one state to another; transitionID, the report's last
// transition, names the change.
func queueHealthChanged(tx *gorm.DB, orgID, installID string, before, after ComponentHealth, transitionID int64, now time.Time) error {
	if before.State == after.State {
		return nil
	}
	var inst Install
	if err := tx.Select("id", "app_id", "name").Where("id = ?", installID).Take(&inst).Error; err != nil {
		return fmt.Errorf("install %s: %w", installID, err)
	}
	was := before.State
	if was == "" {
		was = "not reported"
	}
	summary := fmt.Sprintf("Install %s is %s (was %s)", inst.Name, after.State, was)
	if why := healthWhy(after); why != "" {
		summary += ": " + why
	}
	ev := contract.NotificationEvent{ID: contract.EventID(contract.EventHealthChanged, installID, strconv.FormatInt(transitionID, 10)),
		Type: contract.EventHealthChanged, Time: now, OrgID: orgID, AppID: inst.AppID, InstallID: installID, Summary: summary}
	return queueEvent(tx, ev, 0, now)
}

// healthWhy says which component decides the health and its object, not
// the condition: a health-check action's condition quotes its script's output,
// which an event must never carry (the install's health page shows it).
func healthWhy(c ComponentHealth) string {
	why := "component " + c.Component
	if c.Object != "" {
		why += ", " + c.Object
	}
	return why
}
