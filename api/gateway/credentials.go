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

// keysTTL is how long the gateway keeps an org's signing keys: a rotation
// or a retirement reaches its claims within it.
const keysTTL = 10 * time.Second

// orgKeys are an org's signing keys, read before a claim so that a claimed
// attempt's credentials need no further read (attemptcred.Keys) but for a
// key made since (a rotation), which is read then.
type orgKeys struct {
	current store.SigningKey
	byID    map[string]store.SigningKey // read-only once made: claims share it
	read    time.Time
	store   *store.Store
}

func (k *orgKeys) SigningKey(_ context.Context, owner string) (store.SigningKey, error) {
	if owner != k.current.Owner {
		return store.SigningKey{}, fmt.Errorf("signing key of %s: %w", owner, store.ErrNotFound)
	}
	return k.current, nil
}

func (k *orgKeys) SigningKeyByID(ctx context.Context, id string) (store.SigningKey, error) {
	if id == "" {
		id = store.LegacyKeyID
	}
	if key, ok := k.byID[id]; ok {
		return key, nil
	}
	return k.store.SigningKeyByID(ctx, id)
}

// credentialKeys are the org's signing keys, read at most every keysTTL.
func (g *Gateway) credentialKeys(ctx context.Context, org string) (*orgKeys, error) {
	g.mu.Lock()
	k := g.credKeys[org]
	g.mu.Unlock()
	if k != nil && time.Since(k.read) < keysTTL {
		return k, nil
	}
	current, err := g.store.SigningKey(ctx, org)
	if err != nil {
		return nil, fmt.Errorf("credential keys: %w", err)
	}
	verify, err := g.store.VerifyingKeys(ctx, org)
	if err != nil {
		return nil, fmt.Errorf("credential keys: %w", err)
	}
	k = &orgKeys{current: current, byID: map[string]store.SigningKey{current.ID: current}, read: time.Now(), store: g.store}
	for _, v := range verify {
		k.byID[v.ID] = v
	}
	g.mu.Lock()
	g.credKeys[org] = k
	g.mu.Unlock()
	return k, nil
}

// attemptManifest is a claimed job's manifest with the credentials of its
// attempt in place of the placeholders (package attemptcred). A key it
// could not read leaves its placeholders: the attempt's credentials fail,
// and the job with them (the workflow retries it).
func (g *Gateway) attemptManifest(ctx context.Context, keys *orgKeys, job *store.Job) []byte {
	ttl := time.Duration(job.TimeoutMS+job.InputsWaitMS)*time.Millisecond + credentialSlack
	if job.TimeoutMS <= 0 {
		ttl = 24 * time.Hour
	}
	m, err := attemptcred.Fill(ctx, []byte(job.Manifest), keys, attemptcred.Job{ID: job.ID, Org: job.OrgID, Attempt: job.Attempt}, ttl, time.Now())
	if err != nil {
		g.log.Error("gateway: reading a signing key for a claimed attempt's credentials failed", "job", job.ID, "err", err)
	}
	return m
}
