package dashboard_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/contract"
)

// The Notifications page offers every event type the API knows, and no
// other: its list is contract.EventTypes.
func TestNotificationsPageKnowsTheEventTypes(t *testing.T) {
	src, err := os.ReadFile("assets/js/notifications.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^export const EVENT_TYPES = \[(.*)\];$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("notifications.js has no EVENT_TYPES line")
	}
	var got []string
	for _, q := range strings.Split(string(m[1]), ",") {
		got = append(got, strings.Trim(strings.TrimSpace(q), `"`))
	}
	if !slices.Equal(got, contract.EventTypes) {
		t.Fatalf("notifications.js's EVENT_TYPES %q, want contract.EventTypes %q", got, contract.EventTypes)
	}
}
