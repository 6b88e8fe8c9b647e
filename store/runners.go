package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// TopicRunnerTokens is published when runner tokens are revoked, so gateways
// drop what they cached.
const TopicRunnerTokens = "runner-tokens"

func newRegistrationToken() string { return newToken(protocol.RegistrationTokenPrefix) }

// EnsureBuildRunner returns the org's build runner, creating it if needed.
func (s *Store) EnsureBuildRunner(ctx context.Context, orgID string) (Runner, error) {
	var r Runner
	err := s.db.WithContext(ctx).Where("org_id = ? AND kind = ?", orgID, RunnerKindBuild).First(&r).Error
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return Runner{}, fmt.Errorf("find build runner: %w", err)
	}
	r = Runner{ID: NewID("run"), OrgID: orgID, Kind: RunnerKindBuild, Name: "build", Capabilities: []string{}, CreatedAt: s.now()}
	if err := s.db.WithContext(ctx).Create(&r).Error; err != nil {
		return Runner{}, fmt.Errorf("create build runner: %w", err)
	}
	return r, nil
}

// RotateRegistrationToken issues a new one-time registration token for one of
// the org's runners (the old one stops working). Tokens the runner already
// holds stay valid.
func (s *Store) RotateRegistrationToken(ctx context.Context, orgID, runnerID string) (string, error) {
	plain := newRegistrationToken()
	res := s.db.WithContext(ctx).Model(&Runner{}).Where("org_id = ? AND id = ?", orgID, runnerID).
		Update("registration_token_hash", HashToken(plain))
	if res.Error != nil {
		return "", fmt.Errorf("rotate registration token: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return "", fmt.Errorf("runner %s: %w", runnerID, ErrNotFound)
	}
	return plain, nil
}

// RunnerInfo is what a runner reports about itself, at registration (all of
// it) and with its heartbeats (all but Name).
type RunnerInfo struct {
	Name, Version string
	// Platform is "<os>_<arch>"; "" from a runner that does not say.
	Platform     string
	Capabilities []string
}

// RegisterRunner exchanges a one-time registration token for a runner token.
func (s *Store) RegisterRunner(ctx context.Context, regToken string, info RunnerInfo) (Runner, string, error) {
	if !strings.HasPrefix(regToken, protocol.RegistrationTokenPrefix) {
		return Runner{}, "", ErrUnauthorized
	}
	var r Runner
	var plain string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("registration_token_hash = ?", HashToken(regToken)).First(&r).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrUnauthorized
			}
			return err
		}
		now := s.now()
		// Consume the registration token only if nobody else did meanwhile.
		res := tx.Model(&Runner{}).Where("id = ? AND registration_token_hash = ?", r.ID, HashToken(regToken)).
			Updates(seen(now, map[string]any{"registration_token_hash": nil, "registered_at": now, "name": info.Name,
				"version": info.Version, "platform": info.Platform, "capabilities": jsonList(info.Capabilities)}))
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrUnauthorized
		}
		var err error
		plain, err = issueRunnerToken(tx, r.ID, now)
		return err
	})
	if err != nil {
		return Runner{}, "", fmt.Errorf("register runner: %w", err)
	}
	return r, plain, nil
}

// IssueRunnerToken creates a runner token directly (used by `outpost dev`,
// which launches its own runners).
func (s *Store) IssueRunnerToken(ctx context.Context, orgID, runnerID string) (string, error) {
	if _, err := s.GetRunner(ctx, orgID, runnerID); err != nil {
		return "", err
	}
	return issueRunnerToken(s.db.WithContext(ctx), runnerID, s.now())
}

func issueRunnerToken(tx *gorm.DB, runnerID string, now time.Time) (string, error) {
	plain := newToken(protocol.RunnerTokenPrefix)
	t := RunnerToken{ID: NewID("rtk"), RunnerID: runnerID, TokenHash: HashToken(plain), CreatedAt: now}
	if err := tx.Create(&t).Error; err != nil {
		return "", fmt.Errorf("create runner token: %w", err)
	}
	return plain, nil
}

// RevokeRunnerTokens revokes every token of one of the org's runners.
func (s *Store) RevokeRunnerTokens(ctx context.Context, orgID, runnerID string) error {
	if _, err := s.GetRunner(ctx, orgID, runnerID); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Model(&RunnerToken{}).Where("runner_id = ? AND revoked_at IS NULL", runnerID).
		Update("revoked_at", s.now()).Error
	if err != nil {
		return fmt.Errorf("revoke runner tokens: %w", err)
	}
	s.publish(ctx, TopicRunnerTokens)
	return nil
}

// AuthenticateRunner returns the runner a valid, unrevoked token belongs to.
func (s *Store) AuthenticateRunner(ctx context.Context, plain string) (Runner, error) {
	if !strings.HasPrefix(plain, protocol.RunnerTokenPrefix) {
		return Runner{}, ErrUnauthorized
	}
	var r Runner
	err := s.db.WithContext(ctx).
		Joins("JOIN runner_tokens ON runner_tokens.runner_id = runners.id").
		Where("runner_tokens.token_hash = ? AND runner_tokens.revoked_at IS NULL", HashToken(plain)).
		First(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Runner{}, ErrUnauthorized
	}
	if err != nil {
		return Runner{}, fmt.Errorf("authenticate runner: %w", err)
	}
	return r, nil
}

// UpdateRunnerInfo records what a runner reported about itself.
// (its Name is not changed).
func (s *Store) UpdateRunnerInfo(ctx context.Context, runnerID string, info RunnerInfo) error {
	err := s.db.WithContext(ctx).Model(&Runner{}).Where("id = ?", runnerID).
		Updates(seen(s.now(), map[string]any{"version": info.Version, "platform": info.Platform,
			"capabilities": jsonList(info.Capabilities)})).Error
	if err != nil {
		return fmt.Errorf("update runner: %w", err)
	}
	return nil
}

// DefaultOnlineWindow is how recently a runner must have been seen to count
// as online; a longer gap between its calls starts a new OnlineSince.
const DefaultOnlineWindow = 90 * time.Second

// onlineSince is the new online_since of a runner seen at at: at, after a
// gap longer than DefaultOnlineWindow (or never seen), else unchanged. Both
// dialects evaluate it on the row as it was before the update.
func onlineSince(at time.Time) clause.Expr {
	return gorm.Expr("CASE WHEN last_seen_at IS NULL OR last_seen_at < ? OR online_since IS NULL THEN ? ELSE online_since END",
		at.Add(-DefaultOnlineWindow), at)
}

// seen adds to updates that a runner was seen at at.
func seen(at time.Time, updates map[string]any) map[string]any {
	updates["last_seen_at"], updates["online_since"] = at, onlineSince(at)
	return updates
}

// TouchRunners records that runners were seen at a time, in one statement.
func (s *Store) TouchRunners(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.db.WithContext(ctx).Model(&Runner{}).Where("id IN ?", ids).Updates(seen(at, map[string]any{})).Error
	if err != nil {
		return fmt.Errorf("touch runners: %w", err)
	}
	return nil
}

// ListRunners lists the org's runners.
func (s *Store) ListRunners(ctx context.Context, orgID string) ([]Runner, error) {
	return list[Runner](s.db.WithContext(ctx), "kind, created_at", "org_id = ?", orgID)
}

// GetRunner finds one of the org's runners.
func (s *Store) GetRunner(ctx context.Context, orgID, id string) (Runner, error) {
	return first[Runner](s.db.WithContext(ctx), "runner "+id, "org_id = ? AND id = ?", orgID, id)
}

// GetInstallRunner finds the runner of one of the org's installs.
func (s *Store) GetInstallRunner(ctx context.Context, orgID, installID string) (Runner, error) {
	return first[Runner](s.db.WithContext(ctx), "runner of install "+installID, "org_id = ? AND install_id = ?", orgID, installID)
}

// jsonList is a string list as its stored JSON text, for map updates (which
// bypass the model's serializer).
func jsonList(l []string) string {
	if l == nil {
		l = []string{}
	}
	return mustJSON(l)
}

// RunnerLoad is how many jobs a runner has under way and waiting.
type RunnerLoad struct {
	Running, Queued int
}

// RunnerLoads are the org's runners' job counts, by runner ID (when
// runnerID is set, that runner's only); a runner with none is absent.
func (s *Store) RunnerLoads(ctx context.Context, orgID, runnerID string) (map[string]RunnerLoad, error) {
	var rows []struct {
		RunnerID string
		Status   status.Job
		N        int
	}
	q := s.db.WithContext(ctx).Model(&Job{}).Select("runner_id, status, count(*) AS n").
		Where("org_id = ? AND status IN ?", orgID, []status.Job{status.JobQueued, status.JobRunning})
	if runnerID != "" {
		q = q.Where("runner_id = ?", runnerID)
	}
	if err := q.Group("runner_id, status").Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := map[string]RunnerLoad{}
	for _, r := range rows {
		l := out[r.RunnerID]
		if r.Status == status.JobRunning {
			l.Running = r.N
		} else {
			l.Queued = r.N
		}
		out[r.RunnerID] = l
	}
	return out, nil
}

// QueuePosition is a queued job's place in its runner's queue: 1 when the
// runner's next claim takes it (claims take the oldest first).
func (s *Store) QueuePosition(ctx context.Context, j Job) (int, error) {
	var ahead int64
	err := s.db.WithContext(ctx).Model(&Job{}).
		Where("runner_id = ? AND status = ? AND (created_at < ? OR (created_at = ? AND id < ?))",
			j.RunnerID, status.JobQueued, j.CreatedAt, j.CreatedAt, j.ID).Count(&ahead).Error
	return int(ahead) + 1, err
}

// RecordConnectionErrors adds what a runner said of its failed calls to
// the gateway to those it said before, keeping the latest
// maxConnectionErrors (nothing changes when it said none).
func (s *Store) RecordConnectionErrors(ctx context.Context, runnerID string, errs []protocol.ConnectionError) error {
	if len(errs) == 0 {
		return nil
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var r Runner
		if err := tx.Select("id", "connection_errors").Where("id = ?", runnerID).First(&r).Error; err != nil {
			return notFound(err, "runner "+runnerID)
		}
		all := append(r.ConnectionErrors, errs...)
		if len(all) > maxConnectionErrors {
			all = all[len(all)-maxConnectionErrors:]
		}
		b, err := json.Marshal(all)
		if err != nil {
			return err
		}
		return tx.Model(&Runner{}).Where("id = ?", runnerID).Update("connection_errors", string(b)).Error
	})
}

// maxConnectionErrors is how many of a runner's connection errors are kept.
const maxConnectionErrors = 5

// AppRunnerPlatforms are the platforms the app's install runners reported,
// distinct and sorted (runners that reported none are left out): those a
// terraform module's build vendors providers for.
func (s *Store) AppRunnerPlatforms(ctx context.Context, orgID, appID string) ([]string, error) {
	var platforms []string
	err := s.db.WithContext(ctx).Model(&Runner{}).
		Joins("JOIN installs ON installs.id = runners.install_id").
		Where("installs.org_id = ? AND installs.app_id = ? AND runners.platform <> ''", orgID, appID).
		Distinct("runners.platform").Order("runners.platform").Pluck("runners.platform", &platforms).Error
	if err != nil {
		return nil, fmt.Errorf("app runner platforms: %w", err)
	}
	return platforms, nil
}
