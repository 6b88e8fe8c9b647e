package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// AuditEvent is one changing call to the control API (or a refused one),
// recorded after it was answered: who made it, what it was, when, and how it
// ended. Never the request's body.
type AuditEvent struct {
	ID    string `gorm:"primaryKey;size:32" json:"id"`
	OrgID string `gorm:"size:32;not null" json:"-"`
	// CreatedAt is when the answer was sent.
	CreatedAt time.Time `gorm:"not null" json:"at"`
	// TokenID and TokenName are the API token that made the call (a revoked
	// one too, when the call was refused for it).
	TokenID   string `gorm:"size:32" json:"token_id"`
	TokenName string `gorm:"size:200" json:"token_name"`
	// UserID and UserName are the user the token or session belongs to ("" for
	// a token made before users).
	UserID   string `gorm:"size:32;not null;default:''" json:"user_id,omitempty"`
	UserName string `gorm:"size:200;not null;default:''" json:"user_name,omitempty"`
	// Via is how the token came: "bearer" (Authorization header) or
	// "session" (the dashboard's cookie).
	Via    string `gorm:"size:20;not null" json:"via"`
	Method string `gorm:"size:10;not null" json:"method"`
	Route  string `gorm:"size:200;not null" json:"route"`  // the pattern, e.g. /v1/installs/{id}
	Action string `gorm:"size:100;not null" json:"action"` // the OpenAPI operation id
	// Objects are the objects the call named or made, by kind: install_id,
	// operation_id, step, token_id…
	Objects    map[string]string `gorm:"serializer:json;type:text" json:"objects"`
	Status     int               `gorm:"not null" json:"status"`
	ErrorCode  string            `gorm:"size:100" json:"error_code,omitempty"`
	DurationMS int64             `gorm:"not null;default:0" json:"duration_ms"`
}

// Audit-event values of Via.
const (
	ViaBearer  = "bearer"
	ViaSession = "session"
)

// AuditFilter selects an org's audit events; the zero value is the latest
// DefaultAuditLimit.
type AuditFilter struct {
	TokenID  string
	User     string // a user's ID or name
	Action   string
	ObjectID string    // one of the event's Objects
	Since    time.Time // at or after
	// Before is an event ID: only the events listed after it (older).
	Before string
	Limit  int
}

// DefaultAuditLimit and MaxAuditLimit bound a page of audit events.
const (
	DefaultAuditLimit = 50
	MaxAuditLimit     = 200
)

// RecordAuditEvent stores ev, giving it an ID and, when it has none, the
// current time.
func (s *Store) RecordAuditEvent(ctx context.Context, ev AuditEvent) (AuditEvent, error) {
	if ev.OrgID == "" {
		return AuditEvent{}, fmt.Errorf("record audit event: no org")
	}
	ev.ID = NewID("aud")
	if ev.Objects == nil {
		ev.Objects = map[string]string{}
	}
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = s.now()
	}
	ev.CreatedAt = ev.CreatedAt.UTC().Truncate(time.Microsecond) // as PostgreSQL keeps it
	if err := s.db.WithContext(ctx).Create(&ev).Error; err != nil {
		return AuditEvent{}, fmt.Errorf("record audit event: %w", err)
	}
	return ev, nil
}

// ListAuditEvents lists the org's audit events matching f, newest first.
// A Before that is not one of the org's events is a FieldError on before.
func (s *Store) ListAuditEvents(ctx context.Context, orgID string, f AuditFilter) ([]AuditEvent, error) {
	db := s.db.WithContext(ctx)
	q := db.Where("org_id = ?", orgID)
	if f.Before != "" {
		cur, err := first[AuditEvent](db, "audit event "+f.Before, "org_id = ? AND id = ?", orgID, f.Before)
		if errors.Is(err, ErrNotFound) {
			return nil, fieldErr("before", "%s is not an event of this org's audit log", f.Before)
		}
		if err != nil {
			return nil, err
		}
		q = q.Where("(created_at < ? OR (created_at = ? AND id < ?))", cur.CreatedAt, cur.CreatedAt, cur.ID)
	}
	if f.TokenID != "" {
		q = q.Where("token_id = ?", f.TokenID)
	}
	if f.User != "" {
		q = q.Where("(user_id = ? OR user_name = ?)", f.User, f.User)
	}
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if f.ObjectID != "" {
		q = q.Where(`objects LIKE ? ESCAPE '\'`, objectPattern(f.ObjectID))
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", f.Since.UTC())
	}
	limit := f.Limit
	if limit <= 0 || limit > MaxAuditLimit {
		limit = DefaultAuditLimit
	}
	out := []AuditEvent{}
	if err := q.Order("created_at DESC, id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list audit events: %w", err)
	}
	return out, nil
}

// objectPattern is the LIKE pattern of an Objects column (JSON, as
// json.Marshal writes it) holding id as one of its values.
func objectPattern(id string) string {
	quoted, _ := json.Marshal(id)
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(string(quoted))
	return "%:" + esc + "%"
}
