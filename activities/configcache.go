package activities

import (
	"strconv"
	"sync"

	"github.com/outpost-dev/outpost/appconfig"
)

// configCache holds parsed app config versions, which are read-only once
// parsed. It forgets them all when full: a worker runs few versions at once.
type configCache struct {
	mu      sync.Mutex
	entries map[string]*appconfig.Config
}

const configCacheSize = 64

func configKey(orgID, appID string, version int) string {
	return orgID + "/" + appID + "/" + strconv.Itoa(version)
}

func (c *configCache) get(orgID, appID string, version int) (*appconfig.Config, bool) {
	if version <= 0 {
		return nil, false // "the latest": not a version yet
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cfg, ok := c.entries[configKey(orgID, appID, version)]
	return cfg, ok
}

func (c *configCache) put(orgID, appID string, version int, cfg *appconfig.Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= configCacheSize {
		c.entries = map[string]*appconfig.Config{}
	}
	c.entries[configKey(orgID, appID, version)] = cfg
}
