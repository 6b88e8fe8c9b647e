package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/outpost-dev/outpost/contract/status"
)

// Credentials per attempt. A terraform job enqueued without a StateToken
// gets a state credential per attempt instead: AttemptStateToken, derived
// from its org's signing key (SigningKey, whose ID it carries), the job and
// the attempt,
// handed to the runner when it claims the attempt (see internal/attemptcred)
// and never stored. It is valid while that attempt holds its lease; a retried
// attempt has another.

// AttemptStateToken is the state credential of one attempt of a job:
// StateTokenPrefix + the key's ID + "." + the MAC (the legacy key's, made
// before keys had IDs, have no ID and no dot).
func AttemptStateToken(key SigningKey, jobID string, attempt int) string {
	return StateTokenPrefix + key.ID + "." + attemptStateMAC(key.Secret, jobID, attempt)
}

func attemptStateMAC(key []byte, jobID string, attempt int) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("outpost terraform state credential\x00" + jobID + "\x00" + strconv.Itoa(attempt)))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// AttemptHoldsLease reports whether the attempt is its job's running one and
// its lease has not expired (registry.Leases).
func (s *Store) AttemptHoldsLease(ctx context.Context, jobID string, attempt int) (bool, error) {
	var j Job
	err := s.db.WithContext(ctx).Select("id", "status", "attempt", "lease_expires_at").Where("id = ?", jobID).Take(&j).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("job %s: %w", jobID, err)
	}
	return s.holdsLease(j.Status, j.Attempt, j.LeaseExpiresAt, attempt), nil
}

// checkAttemptStateToken checks a per-attempt state credential against the
// job's current attempt; an earlier attempt's is ErrStateCredentialEnded.
// Its key must be the job's org's (or the legacy key), and not retired.
func (s *Store) checkAttemptStateToken(ctx context.Context, orgID, jobID string, current int, token string) error {
	if !strings.HasPrefix(token, StateTokenPrefix) {
		return ErrUnauthorized
	}
	kid, mac, ok := strings.Cut(strings.TrimPrefix(token, StateTokenPrefix), ".")
	if !ok {
		kid, mac = "", kid
	}
	key, err := s.SigningKeyByID(ctx, kid)
	switch {
	case errors.Is(err, ErrNotFound):
		return ErrUnauthorized
	case err != nil:
		return err
	case key.Owner != orgID && key.Owner != "":
		return ErrUnauthorized
	}
	for a := current; a >= 1; a-- {
		if hashesEqual(attemptStateMAC(key.Secret, jobID, a), mac) {
			if a != current {
				return fmt.Errorf("job %s attempt %d ended (now attempt %d): %w", jobID, a, current, ErrStateCredentialEnded)
			}
			return nil
		}
	}
	return ErrUnauthorized
}

// holdsLease: the job's current attempt is attempt, running, its lease not
// yet expired (ExpireLeases may not have marked it lost yet).
func (s *Store) holdsLease(st status.Job, current int, expires *time.Time, attempt int) bool {
	return st == status.JobRunning && current == attempt && expires != nil && expires.After(s.now())
}
