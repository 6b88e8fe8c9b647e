package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/outpost-dev/outpost/internal/attemptcred"
	"github.com/outpost-dev/outpost/store"
)

// credentialSlack is how long an attempt's registry credential outlives the
// longest the attempt may run; its lease normally ends it much sooner.
const credentialSlack = time.Hour

// credentialKey is the store's credential key, read once.
func (g *Gateway) credentialKey(ctx context.Context) ([]byte, error) {
	g.mu.Lock()
	key := g.credKey
	g.mu.Unlock()
	if key != nil {
		return key, nil
	}
	key, err := g.store.RegistryKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("credential key: %w", err)
	}
	g.mu.Lock()
	g.credKey = key
	g.mu.Unlock()
	return key, nil
}

// attemptManifest is a claimed job's manifest with the credentials of its
// attempt in place of the placeholders (package attemptcred).
func attemptManifest(key []byte, job *store.Job) []byte {
	ttl := time.Duration(job.TimeoutMS+job.InputsWaitMS)*time.Millisecond + credentialSlack
	if job.TimeoutMS <= 0 {
		ttl = 24 * time.Hour
	}
	return attemptcred.Fill([]byte(job.Manifest), key, attemptcred.Job{ID: job.ID, Org: job.OrgID, Attempt: job.Attempt}, ttl, time.Now())
}
