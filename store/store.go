package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/outpost-dev/outpost/store/notify"
	"github.com/outpost-dev/outpost/store/seal"
)

// Dialects.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// Config says which database to use.
type Config struct {
	// DatabaseURL selects PostgreSQL (e.g. postgres://user@host/db). Empty
	// selects SQLite at SQLitePath.
	DatabaseURL string
	// SQLitePath is the SQLite file of the embedded mode.
	SQLitePath string
	// Logger receives slow-query and error logs; nil uses slog.Default.
	Logger *slog.Logger
	// MaxConns bounds the PostgreSQL connection pool (default 16). Unbounded,
	// a burst of runners reconnecting at once opens connections past the
	// server's max_connections and answers 500s.
	MaxConns int
	// Keys are the key-encryption keys that wrap the data keys sealing
	// secrets at rest (package seal): required.
	Keys *seal.Keyring
	// Bus, if set, is used instead of the default one (Postgres LISTEN/NOTIFY
	// or in-process). The store closes only a bus it created.
	Bus notify.Bus
	// StateVersionsKept is how many terraform state versions each workspace
	// keeps: older ones are deleted as a new one is written (default
	// DefaultStateVersionsKept).
	StateVersionsKept int
}

// DefaultStateVersionsKept is Config.StateVersionsKept's default.
const DefaultStateVersionsKept = 100

// Store is the database plus the notification bus.
type Store struct {
	db      *gorm.DB
	dialect string
	bus     notify.Bus
	ownBus  bool
	keys    *dataKeys
	now     func() time.Time
	// stateKept: Config.StateVersionsKept.
	stateKept int
}

// Open connects to the database (without migrating it).
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Keys == nil || cfg.Keys.Current == nil {
		return nil, errors.New("store: no key-encryption key given: secrets at rest are sealed with it (OUTPOST_KEK or -kek-file)")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	gcfg := &gorm.Config{
		Logger:                 newQuietLogger(log),
		SkipDefaultTransaction: true,
		TranslateError:         true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	}
	s := &Store{now: func() time.Time { return time.Now().UTC() }, bus: cfg.Bus, stateKept: cfg.StateVersionsKept}
	if s.stateKept <= 0 {
		s.stateKept = DefaultStateVersionsKept
	}
	var err error
	if cfg.DatabaseURL != "" {
		s.dialect = Postgres
		s.db, err = gorm.Open(postgres.Open(cfg.DatabaseURL), gcfg)
		if err != nil {
			return nil, fmt.Errorf("store: open postgres: %w", err)
		}
		sqlDB, err := s.db.DB()
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		n := cfg.MaxConns
		if n <= 0 {
			n = 16
		}
		sqlDB.SetMaxOpenConns(n)
		sqlDB.SetMaxIdleConns(n)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
		if s.bus == nil {
			s.bus, err = notify.NewPostgres(ctx, cfg.DatabaseURL, log)
			if err != nil {
				return nil, fmt.Errorf("store: %w", err)
			}
			s.ownBus = true
		}
	} else {
		if cfg.SQLitePath == "" {
			return nil, errors.New("store: neither a database URL nor a SQLite path given")
		}
		if err := os.MkdirAll(filepath.Dir(cfg.SQLitePath), 0o700); err != nil {
			return nil, fmt.Errorf("store: create data directory: %w", err)
		}
		s.dialect = SQLite
		dsn := "file:" + cfg.SQLitePath + "?_busy_timeout=10000&_journal_mode=WAL&_foreign_keys=on&_txlock=immediate"
		s.db, err = gorm.Open(sqlite.Open(dsn), gcfg)
		if err != nil {
			return nil, fmt.Errorf("store: open sqlite %s: %w", cfg.SQLitePath, err)
		}
		sqlDB, err := s.db.DB()
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		// One writer at a time is SQLite's model; one connection makes that
		// explicit and avoids "database is locked" under concurrent requests.
		sqlDB.SetMaxOpenConns(1)
		if s.bus == nil {
			s.bus = notify.NewLocal()
			s.ownBus = true
		}
	}
	s.keys = newDataKeys(cfg.Keys)
	if err := s.db.Use(s.keys); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Dialect is Postgres or SQLite.
func (s *Store) Dialect() string { return s.dialect }

// Bus is the notification bus the store publishes on.
func (s *Store) Bus() notify.Bus { return s.bus }

// DB exposes the gorm handle (for tests and benchmarks that count queries).
func (s *Store) DB() *gorm.DB { return s.db }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping %s: %w", s.dialect, err)
	}
	return nil
}

// Close closes the database and the bus the store created.
func (s *Store) Close() error {
	if s.ownBus && s.bus != nil {
		s.bus.Close()
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// publish wakes waiters of topics after a change committed. A lost
// notification only delays a waiter until its next periodic check, so an
// error is logged by the bus, not returned.
func (s *Store) publish(ctx context.Context, topics ...string) {
	for _, t := range topics {
		_ = s.bus.Publish(context.WithoutCancel(ctx), t)
	}
}

// notFound maps gorm's not-found to ErrNotFound with a readable subject.
func notFound(err error, what string) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (s *Store) sqlConn(ctx context.Context) (*sql.Conn, error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: get connection: %w", err)
	}
	return conn, nil
}

// slowStatement is how long a statement runs before it is logged (a
// warning) although it succeeded.
const slowStatement = time.Second

// quietLogger is gorm's slog logger at level Warn: failed and slow statements, with
// placeholders (values may be secrets), but not the errors that are answers (not found, a
// unique violation, a caller gone); a statement it will not log is never rendered.
type quietLogger struct {
	logger.Interface
	level logger.LogLevel
}

func newQuietLogger(log *slog.Logger) quietLogger {
	return quietLogger{logger.NewSlogLogger(log, logger.Config{SlowThreshold: slowStatement, LogLevel: logger.Warn,
		IgnoreRecordNotFoundError: true, ParameterizedQueries: true}), logger.Warn}
}

// ParamsFilter leaves the values out of a logged statement: it shows its
// placeholders. (gorm asks the logger it is given, this one, whether it
// filters them; the ParameterizedQueries of the logger inside is not seen.)
func (quietLogger) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}

func (q quietLogger) LogMode(l logger.LogLevel) logger.Interface {
	return quietLogger{q.Interface.LogMode(l), l}
}

func (q quietLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if err != nil && (errors.Is(err, gorm.ErrRecordNotFound) || errors.Is(err, gorm.ErrDuplicatedKey) || errors.Is(err, context.Canceled) ||
		strings.Contains(err.Error(), "duplicate key value") || strings.Contains(err.Error(), "UNIQUE constraint failed")) {
		err = nil
	}
	if q.level <= logger.Silent || (q.level < logger.Info && err == nil && time.Since(begin) <= slowStatement) {
		return
	}
	q.Interface.Trace(ctx, begin, fc, err)
}
