package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Channel is the one Postgres channel Outpost uses; the payload is the topic.
const Channel = "outpost_events"

// Postgres is a bus over LISTEN/NOTIFY: one connection listens for the whole
// process; publishing uses the pool.
type Postgres struct {
	*fanout
	pool   *pgxpool.Pool
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{}
	once   sync.Once
}

// NewPostgres connects to dsn and starts listening. It returns once LISTEN is
// in place, so nothing published after it returns is missed.
func NewPostgres(ctx context.Context, dsn string, log *slog.Logger) (*Postgres, error) {
	if log == nil {
		log = slog.Default()
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("notify: parse database URL: %w", err)
	}
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("notify: connect: %w", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	p := &Postgres{fanout: newFanout(), pool: pool, log: log, cancel: cancel,
		done: make(chan struct{}), ready: make(chan struct{})}
	go p.listen(lctx)
	select {
	case <-p.ready:
		return p, nil
	case <-ctx.Done():
		p.Close()
		return nil, fmt.Errorf("notify: waiting for LISTEN: %w", ctx.Err())
	case <-time.After(15 * time.Second):
		p.Close()
		return nil, errors.New("notify: LISTEN not established within 15s")
	}
}

// Publish sends NOTIFY; every process listening (this one too) delivers it.
func (p *Postgres) Publish(ctx context.Context, topic string) error {
	if _, err := p.pool.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, topic); err != nil {
		return fmt.Errorf("notify: publish %q: %w", topic, err)
	}
	return nil
}

func (p *Postgres) listen(ctx context.Context) {
	defer close(p.done)
	backoff := 100 * time.Millisecond
	first := true
	for ctx.Err() == nil {
		err := p.listenOnce(ctx, func() {
			if first {
				close(p.ready)
				first = false
			} else {
				// Anything published while we were away is lost: wake everyone.
				p.reset()
			}
			backoff = 100 * time.Millisecond
		})
		if ctx.Err() != nil {
			return
		}
		p.log.Warn("notify: listener connection lost, reconnecting", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (p *Postgres) listenOnce(ctx context.Context, onListening func()) error {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
		return err
	}
	onListening()
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			// The connection's state is unknown: don't return it to the pool.
			conn.Conn().Close(context.Background())
			return err
		}
		p.deliver(n.Payload)
	}
}

// Close stops listening and closes the pool.
func (p *Postgres) Close() error {
	p.once.Do(func() {
		p.cancel()
		<-p.done
		p.pool.Close()
	})
	return nil
}
