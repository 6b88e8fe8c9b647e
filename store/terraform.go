package store

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
)

// Terraform state, kept by the control plane behind terraform's standard http
// backend on the gateway.
//
//   - A job that runs terraform is enqueued with a Workspace, and each of its
//     attempts gets its own state credential when claimed (AttemptStateToken):
//     terraform sends it with the job ID as HTTP basic auth. It is valid only
//     while that attempt holds its lease, and only for that one workspace.
//     (A StateToken given at enqueue, the way before, is one credential for
//     every attempt, of which the store keeps the hash.)
//   - Every state terraform writes is kept as a new version; a read returns
//     the latest one.
//   - A lock is recorded with the job and the attempt that took it. The
//     control plane owns both the lease and the lock: when ExpireLeases marks
//     an attempt lost, or CompleteJob records how it ended, the attempt's locks
//     are released in the same transaction, so a retry never finds a lock held
//     by a dead process.

// StateTokenPrefix starts every state credential.
const StateTokenPrefix = "opst_"

// NewStateToken returns a fresh state credential for JobSpec.StateToken (and
// the manifest's backend password).
func NewStateToken() string { return newToken(StateTokenPrefix) }

// MaxWorkspaceLen bounds a workspace name.
const MaxWorkspaceLen = 200

var workspaceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidateWorkspace checks a workspace name: letters, digits, '.', '_' and
// '-', starting with a letter or digit, at most MaxWorkspaceLen long (it is
// part of the backend's URL).
func ValidateWorkspace(name string) error {
	switch {
	case name == "":
		return fieldErr("workspace", "is required")
	case len(name) > MaxWorkspaceLen:
		return fieldErr("workspace", "is %d characters long; at most %d", len(name), MaxWorkspaceLen)
	case !workspaceName.MatchString(name):
		return fieldErr("workspace", "%q may hold only letters, digits, '.', '_' and '-', and must start with a letter or digit", name)
	}
	return nil
}

// Errors of the state backend.
var (
	// ErrStateLocked: the workspace is locked by another holder. The error is
	// a *StateLockError that names the holder.
	ErrStateLocked = errors.New("state locked")
	// ErrStateCredentialEnded: the credential was right, but its job is not
	// running (any more): it unwraps to ErrUnauthorized too.
	ErrStateCredentialEnded = fmt.Errorf("%w: the job's state credential is valid only while the job runs", ErrUnauthorized)
)

// StateLockError is ErrStateLocked with the lock that is in the way.
type StateLockError struct {
	Holder TerraformStateLock
}

func (e *StateLockError) Error() string {
	return fmt.Sprintf("workspace %s is locked by job %s (attempt %d, lock %s)",
		e.Holder.Workspace, e.Holder.JobID, e.Holder.Attempt, e.Holder.LockID)
}

func (e *StateLockError) Unwrap() error { return ErrStateLocked }

// JobStateCredential is the state credential of one job, kept hashed.
type JobStateCredential struct {
	JobID     string `gorm:"primaryKey;size:32"`
	OrgID     string `gorm:"size:32;not null"`
	Workspace string `gorm:"size:200;not null;index"`
	TokenHash string `gorm:"size:64;not null"`
	CreatedAt time.Time
}

// TerraformStateVersion is one state terraform wrote to a workspace.
// Versions count from 1 per workspace and are never overwritten.
type TerraformStateVersion struct {
	ID        int64  `gorm:"primaryKey;autoIncrement" json:"-"`
	OrgID     string `gorm:"size:32;not null;uniqueIndex:idx_tf_state_versions_workspace_version,priority:1" json:"org_id"`
	Workspace string `gorm:"size:200;not null;uniqueIndex:idx_tf_state_versions_workspace_version,priority:2" json:"workspace"`
	Version   int    `gorm:"not null;uniqueIndex:idx_tf_state_versions_workspace_version,priority:3" json:"version"`
	// Serial and Lineage are terraform's, read from the state.
	Serial  int64  `gorm:"not null;default:0" json:"serial"`
	Lineage string `gorm:"size:100" json:"lineage"`
	// MD5 is the hex MD5 of State.
	MD5   string `gorm:"column:md5;size:32;not null" json:"md5"`
	State string `gorm:"type:text;not null" json:"-"`
	// JobID and Attempt wrote it.
	JobID   string `gorm:"size:32;not null" json:"job_id"`
	Attempt int    `gorm:"not null" json:"attempt"`
	// DiscardedAt is set on every version of a workspace whose state was
	// deleted (after a destroy): they are kept, but no longer read.
	DiscardedAt *time.Time `json:"discarded_at,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
}

// TerraformStateLock is the lock of a workspace, held by one job attempt.
type TerraformStateLock struct {
	OrgID     string `gorm:"primaryKey;size:32" json:"org_id"`
	Workspace string `gorm:"primaryKey;size:200" json:"workspace"`
	// LockID is terraform's lock ID; Info the lock info JSON terraform sent,
	// returned as it is to whoever finds the workspace locked.
	LockID    string    `gorm:"size:200;not null" json:"lock_id"`
	Info      string    `gorm:"type:text;not null" json:"info"`
	JobID     string    `gorm:"size:32;not null;index" json:"job_id"`
	Attempt   int       `gorm:"not null" json:"attempt"`
	CreatedAt time.Time `json:"created_at"`
}

// StateAccess is what a valid state credential grants: the job's workspace,
// for the job's current attempt.
type StateAccess struct {
	OrgID     string
	JobID     string
	Attempt   int
	Workspace string
}

func hashesEqual(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// AuthenticateState checks a job's state credential. A wrong job or token is
// ErrUnauthorized; the right credential of a job that is not running is
// ErrStateCredentialEnded (which is ErrUnauthorized too).
func (s *Store) AuthenticateState(ctx context.Context, jobID, token string) (StateAccess, error) {
	var row struct {
		OrgID          string
		Workspace      string
		TokenHash      string
		Status         status.Job
		Attempt        int
		LeaseExpiresAt *time.Time
	}
	err := s.db.WithContext(ctx).Table("job_state_credentials AS c").
		Select("c.org_id, c.workspace, c.token_hash, j.status, j.attempt, j.lease_expires_at").
		Joins("JOIN jobs j ON j.id = c.job_id").
		Where("c.job_id = ?", jobID).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return StateAccess{}, ErrUnauthorized
	case err != nil:
		return StateAccess{}, fmt.Errorf("authenticate state credential: %w", err)
	case row.TokenHash == "": // a credential per attempt
		if err := s.checkAttemptStateToken(ctx, row.OrgID, jobID, row.Attempt, token); err != nil {
			return StateAccess{}, err
		}
	case !hashesEqual(row.TokenHash, HashToken(token)):
		return StateAccess{}, ErrUnauthorized
	}
	if !s.holdsLease(row.Status, row.Attempt, row.LeaseExpiresAt, row.Attempt) {
		return StateAccess{}, fmt.Errorf("job %s attempt %d is %s: %w", jobID, row.Attempt, row.Status, ErrStateCredentialEnded)
	}
	return StateAccess{OrgID: row.OrgID, JobID: jobID, Attempt: row.Attempt, Workspace: row.Workspace}, nil
}

// checkAccess re-checks, in a write's transaction, that the attempt is still the job's running one;
// on PostgreSQL it locks the job's row, so lease expiry and completion come wholly before or after it.
func (s *Store) checkAccess(tx *gorm.DB, a StateAccess) error {
	q := tx.Select("id", "status", "attempt").Where("id = ?", a.JobID)
	if s.dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var j Job
	if err := q.Take(&j).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return ErrUnauthorized
		}
		return err
	}
	if j.Status != status.JobRunning || j.Attempt != a.Attempt {
		return fmt.Errorf("job %s attempt %d (now attempt %d, %s): %w", a.JobID, a.Attempt, j.Attempt, j.Status, ErrStateCredentialEnded)
	}
	return nil
}

// GetTerraformState returns a workspace's latest state, or ErrNotFound when
// it has none (never written, or deleted).
func (s *Store) GetTerraformState(ctx context.Context, orgID, workspace string) (TerraformStateVersion, error) {
	var v TerraformStateVersion
	err := s.db.WithContext(ctx).Where("org_id = ? AND workspace = ? AND discarded_at IS NULL", orgID, workspace).
		Order("version DESC").Take(&v).Error
	if err != nil {
		return TerraformStateVersion{}, notFound(err, "state of workspace "+workspace)
	}
	return v, nil
}

// ListTerraformStateVersions lists a workspace's state versions, newest
// first, without the states themselves (discarded ones included).
func (s *Store) ListTerraformStateVersions(ctx context.Context, orgID, workspace string) ([]TerraformStateVersion, error) {
	out, err := list[TerraformStateVersion](s.db.WithContext(ctx).Omit("state"), "version DESC",
		"org_id = ? AND workspace = ?", orgID, workspace)
	if err != nil {
		return nil, fmt.Errorf("list state versions: %w", err)
	}
	return out, nil
}

// terraformStateHeader is the part of a state the store reads.
type terraformStateHeader struct {
	Serial  int64                      `json:"serial"`
	Lineage string                     `json:"lineage"`
	Outputs map[string]json.RawMessage `json:"outputs"`
}

// PutTerraformState stores a new state version written by the attempt. When
// the workspace is locked, lockID must be the lock's and the lock the
// attempt's; a lockID given for a workspace that is not locked is refused too
// (that writer's lock was released: it is fenced off). A state equal to the
// latest version adds no version (created=false).
func (s *Store) PutTerraformState(ctx context.Context, a StateAccess, lockID string, state []byte) (v TerraformStateVersion, created bool, err error) {
	var hdr terraformStateHeader
	if len(bytes.TrimSpace(state)) == 0 {
		return v, false, fieldErr("state", "is empty")
	}
	if err := json.Unmarshal(state, &hdr); err != nil {
		return v, false, fieldErr("state", "is not a terraform state (JSON): %v", err)
	}
	sum := md5.Sum(state)
	v = TerraformStateVersion{OrgID: a.OrgID, Workspace: a.Workspace, Serial: hdr.Serial, Lineage: hdr.Lineage,
		MD5: hex.EncodeToString(sum[:]), State: string(state), JobID: a.JobID, Attempt: a.Attempt}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		lock, err := s.accessLock(tx, a)
		if err != nil {
			return err
		}
		switch {
		case lock != nil && (lock.LockID != lockID || lock.JobID != a.JobID || lock.Attempt != a.Attempt):
			return &StateLockError{Holder: *lock}
		case lock == nil && lockID != "":
			return fmt.Errorf("lock %s on workspace %s is not held (any more): %w", lockID, a.Workspace, ErrConflict)
		}
		var latest []TerraformStateVersion
		if err := tx.Select("version", "md5", "discarded_at").Where("org_id = ? AND workspace = ?", a.OrgID, a.Workspace).
			Order("version DESC").Limit(1).Find(&latest).Error; err != nil {
			return err
		}
		if len(latest) == 1 && latest[0].DiscardedAt == nil && latest[0].MD5 == v.MD5 {
			v = TerraformStateVersion{}
			return tx.Where("org_id = ? AND workspace = ? AND version = ?", a.OrgID, a.Workspace, latest[0].Version).Take(&v).Error
		}
		v.Version = 1
		if len(latest) == 1 {
			v.Version = latest[0].Version + 1
		}
		v.CreatedAt = s.now()
		if err := tx.Create(&v).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return fmt.Errorf("workspace %s: a concurrent state write: %w", a.Workspace, ErrConflict)
			}
			return err
		}
		created = true
		// Only the last stateKept versions stay (the quota on state history).
		return tx.Where("org_id = ? AND workspace = ? AND version <= ?", a.OrgID, a.Workspace, v.Version-s.stateKept).
			Delete(&TerraformStateVersion{}).Error
	})
	if err != nil {
		return TerraformStateVersion{}, false, fmt.Errorf("put state: %w", err)
	}
	return v, created, nil
}

// accessLock checks a's access to its workspace and returns the workspace's
// lock (nil when none is held).
func (s *Store) accessLock(tx *gorm.DB, a StateAccess) (*TerraformStateLock, error) {
	if err := s.checkAccess(tx, a); err != nil {
		return nil, err
	}
	return s.lockOf(tx, a.OrgID, a.Workspace)
}

func (s *Store) lockOf(tx *gorm.DB, orgID, workspace string) (*TerraformStateLock, error) {
	var locks []TerraformStateLock
	q := tx.Where("org_id = ? AND workspace = ?", orgID, workspace)
	if s.dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	if err := q.Limit(1).Find(&locks).Error; err != nil {
		return nil, err
	}
	if len(locks) == 0 {
		return nil, nil
	}
	return &locks[0], nil
}

// terraformLockInfo is the part of terraform's lock info the store reads.
type terraformLockInfo struct {
	ID string `json:"ID"`
}

// LockTerraformState takes the workspace's lock for the attempt. info is the
// lock info JSON terraform sends; its ID is the lock ID. Taking the lock the
// attempt already holds under the same ID succeeds again. A lock held by
// anyone else is a *StateLockError; one left by an attempt that is no longer
// running (which the lease and completion paths release, so only a safety
// net) is taken over.
func (s *Store) LockTerraformState(ctx context.Context, a StateAccess, info []byte) (TerraformStateLock, error) {
	var li terraformLockInfo
	if err := json.Unmarshal(info, &li); err != nil {
		return TerraformStateLock{}, fieldErr("lock info", "is not terraform's lock info (JSON): %v", err)
	}
	if li.ID == "" || len(li.ID) > 200 {
		return TerraformStateLock{}, fieldErr("ID", "the lock ID is required, at most 200 characters")
	}
	lock := TerraformStateLock{OrgID: a.OrgID, Workspace: a.Workspace, LockID: li.ID, Info: string(info),
		JobID: a.JobID, Attempt: a.Attempt, CreatedAt: s.now()}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		held, err := s.accessLock(tx, a)
		if err != nil {
			return err
		}
		if held != nil {
			switch {
			case held.JobID == a.JobID && held.Attempt == a.Attempt && held.LockID == li.ID:
				lock = *held
				return nil
			case held.JobID == a.JobID && held.Attempt == a.Attempt:
				return &StateLockError{Holder: *held}
			}
			alive, err := attemptRunning(tx, held.JobID, held.Attempt)
			if err != nil {
				return err
			}
			if alive {
				return &StateLockError{Holder: *held}
			}
			if err := tx.Where("org_id = ? AND workspace = ?", a.OrgID, a.Workspace).Delete(&TerraformStateLock{}).Error; err != nil {
				return err
			}
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&lock)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 { // taken by a concurrent transaction
			if held, err = s.lockOf(tx, a.OrgID, a.Workspace); err != nil || held == nil {
				return errors.Join(err, fmt.Errorf("workspace %s: a concurrent lock: %w", a.Workspace, ErrStateLocked))
			}
			return &StateLockError{Holder: *held}
		}
		return nil
	})
	if err != nil {
		return TerraformStateLock{}, fmt.Errorf("lock state: %w", err)
	}
	return lock, nil
}

func attemptRunning(tx *gorm.DB, jobID string, attempt int) (bool, error) {
	var n int64
	err := tx.Model(&Job{}).Where("id = ? AND attempt = ? AND status = ?", jobID, attempt, status.JobRunning).Count(&n).Error
	return n > 0, err
}

// UnlockTerraformState releases the workspace's lock held by the attempt
// under lockID. A workspace that is not locked is unlocked already (nil); a
// lock of another holder or ID is a *StateLockError.
func (s *Store) UnlockTerraformState(ctx context.Context, a StateAccess, lockID string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		held, err := s.accessLock(tx, a)
		if err != nil || held == nil {
			return err
		}
		if held.LockID != lockID || held.JobID != a.JobID || held.Attempt != a.Attempt {
			return &StateLockError{Holder: *held}
		}
		return tx.Where("org_id = ? AND workspace = ? AND lock_id = ?", a.OrgID, a.Workspace, lockID).Delete(&TerraformStateLock{}).Error
	})
	if err != nil {
		return fmt.Errorf("unlock state: %w", err)
	}
	return nil
}

// DeleteTerraformStateAs is the backend's DELETE: the attempt discards the
// workspace's state (see DiscardTerraformState); a lock of another holder is
// a *StateLockError.
func (s *Store) DeleteTerraformStateAs(ctx context.Context, a StateAccess, lockID string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		held, err := s.accessLock(tx, a)
		if err != nil {
			return err
		}
		if held != nil && (held.JobID != a.JobID || held.Attempt != a.Attempt || (lockID != "" && held.LockID != lockID)) {
			return &StateLockError{Holder: *held}
		}
		return s.discard(tx, a.OrgID, a.Workspace)
	})
	if err != nil {
		return fmt.Errorf("delete state: %w", err)
	}
	return nil
}

// DiscardTerraformState deletes a workspace's state for the control plane,
// e.g. once a destroy was applied: its versions are kept (marked discarded)
// but no longer read, so a later plan starts from no state. A locked
// workspace is a *StateLockError and nothing changes.
func (s *Store) DiscardTerraformState(ctx context.Context, orgID, workspace string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		held, err := s.lockOf(tx, orgID, workspace)
		if err != nil {
			return err
		}
		if held != nil {
			return &StateLockError{Holder: *held}
		}
		return s.discard(tx, orgID, workspace)
	})
	if err != nil {
		return fmt.Errorf("discard state of %s: %w", workspace, err)
	}
	return nil
}

func (s *Store) discard(tx *gorm.DB, orgID, workspace string) error {
	return tx.Model(&TerraformStateVersion{}).Where("org_id = ? AND workspace = ? AND discarded_at IS NULL", orgID, workspace).
		Update("discarded_at", s.now()).Error
}

// GetTerraformStateLock returns the workspace's lock, or nil when it is not
// locked.
func (s *Store) GetTerraformStateLock(ctx context.Context, orgID, workspace string) (*TerraformStateLock, error) {
	return s.lockOf(s.db.WithContext(ctx), orgID, workspace)
}

// TerraformStateOutputs reads the root module outputs of a workspace's latest
// state (ErrNotFound when it has none). Sensitive values are included,
// marked.
func (s *Store) TerraformStateOutputs(ctx context.Context, orgID, workspace string) (map[string]protocol.TerraformOutput, error) {
	v, err := s.GetTerraformState(ctx, orgID, workspace)
	if err != nil {
		return nil, err
	}
	var hdr terraformStateHeader
	if err := json.Unmarshal([]byte(v.State), &hdr); err != nil {
		return nil, fmt.Errorf("state of %s version %d: %w", workspace, v.Version, err)
	}
	out := make(map[string]protocol.TerraformOutput, len(hdr.Outputs))
	for name, raw := range hdr.Outputs {
		var o protocol.TerraformOutput
		if err := json.Unmarshal(raw, &o); err != nil {
			return nil, fmt.Errorf("state of %s version %d: output %s: %w", workspace, v.Version, name, err)
		}
		out[name] = o
	}
	return out, nil
}

// Job event recorded when the control plane releases a state lock.
const eventStateUnlocked = "state_unlocked"

// releaseStateLocks releases every state lock the attempt holds, inside the
// transaction that ends the attempt (lost or completed), and records it in
// the job's history.
func releaseStateLocks(tx *gorm.DB, jobID string, attempt int, why string, now time.Time) error {
	var locks []TerraformStateLock
	if err := tx.Where("job_id = ? AND attempt = ?", jobID, attempt).Find(&locks).Error; err != nil {
		return err
	}
	for _, l := range locks {
		res := tx.Where("org_id = ? AND workspace = ? AND job_id = ? AND attempt = ?", l.OrgID, l.Workspace, jobID, attempt).
			Delete(&TerraformStateLock{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			continue
		}
		msg := fmt.Sprintf("state lock %s on workspace %s released: %s", l.LockID, l.Workspace, why)
		if err := addEvent(tx, jobID, attempt, eventStateUnlocked, msg, now); err != nil {
			return err
		}
	}
	return nil
}

// createStateCredential records a new job's state credential.
// Without a token, the job's attempts each get their own (AttemptStateToken).
func createStateCredential(tx *gorm.DB, job Job, workspace, token string) error {
	hash := ""
	if token != "" {
		hash = HashToken(token)
	}
	return tx.Create(&JobStateCredential{JobID: job.ID, OrgID: job.OrgID, Workspace: workspace,
		TokenHash: hash, CreatedAt: job.CreatedAt}).Error
}

// validateStateSpec checks JobSpec's state fields: a token needs a
// workspace; a workspace alone means a credential per attempt.
func validateStateSpec(spec JobSpec) error {
	switch {
	case spec.Workspace == "" && spec.StateToken == "":
		return nil
	case spec.StateToken == "":
		return ValidateWorkspace(spec.Workspace)
	case spec.Workspace == "":
		return fieldErr("workspace", "is required with a state token")
	case len(spec.StateToken) < 32:
		return fieldErr("state_token", "is too short to be a credential (see NewStateToken)")
	}
	return ValidateWorkspace(spec.Workspace)
}

// Table names, shared with migration 2's snapshot structs.
func (JobStateCredential) TableName() string    { return "job_state_credentials" }
func (TerraformStateVersion) TableName() string { return "terraform_state_versions" }
func (TerraformStateLock) TableName() string    { return "terraform_state_locks" }
