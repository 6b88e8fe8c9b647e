package migrations

import (
	"time"
)

// v14 keeps since when a runner has been online without a break, so the API
// can say "online since" as well as "offline since" (last seen).
var v14 = steps(
	add("runners", &v14Runner{}, "OnlineSince"),
)

// v14Runner is the column v14 adds to runners.
type v14Runner struct {
	OnlineSince *time.Time
}
