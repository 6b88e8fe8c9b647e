package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/sirupsen/logrus"

	// The storage drivers Config can choose.
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

// Config configures a registry.
type Config struct {
	// Addr is the TCP address to listen on; "" means "127.0.0.1:0" (a free
	// loopback port, see Server.Addr).
	Addr string
	// Dir is the storage directory; "" keeps everything in memory, gone
	// when the server closes.
	Dir string
	// Auth decides who may pull and push; nil is an open registry.
	Auth Authorizer
	// UploadSecret signs a blob upload's state between its requests:
	// registries serving one Dir behind one address must share it, so that
	// any of them continues an upload another began. nil: a random one.
	UploadSecret []byte
}

// Server is a running registry.
type Server struct {
	listener net.Listener
	http     *http.Server
	cancel   context.CancelFunc
	served   chan struct{}
	dir      string // Config.Dir

	mu    sync.Mutex
	fresh map[net.Conn]struct{} // connections that have not sent a request yet

	closeOnce sync.Once
	closeErr  error
}

// trackFresh keeps the set of connections in state New. http.Server's
// Shutdown waits 5 s before it counts such a connection as idle, and clients
// open connections they may never use; Close closes them at once.
func (s *Server) trackFresh(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state == http.StateNew {
		s.fresh[c] = struct{}{}
	} else {
		delete(s.fresh, c)
	}
}

func (s *Server) closeFresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.fresh {
		_ = c.Close()
	}
}

// Start starts a registry and serves it until Close is called or ctx ends.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	silenceLogging()
	if cfg.Dir != "" {
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("registry storage directory %q: %w", cfg.Dir, err)
		}
	}
	appCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	app, err := newApp(appCtx, cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("registry listening on %q: %w", addr, err)
	}
	s := &Server{
		listener: &onceCloseListener{Listener: ln},
		cancel:   cancel,
		served:   make(chan struct{}),
		dir:      cfg.Dir,
		fresh:    map[net.Conn]struct{}{},
	}
	s.http = &http.Server{
		Handler:           app,
		ReadHeaderTimeout: 30 * time.Second,
		ConnState:         s.trackFresh,
	}
	go func() {
		defer close(s.served)
		_ = s.http.Serve(s.listener) // ends with ErrServerClosed on Close
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.served:
		}
	}()
	return s, nil
}

// Addr is the address the registry listens on, as host:port (for example
// "127.0.0.1:41234"): what clients put in front of a repository name.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Close stops the registry: it stops accepting connections, lets requests
// in flight finish for up to 5 seconds, then closes the rest.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// No new connection once the listener is closed, so closing the
		// fresh ones then leaves none for Shutdown to wait on.
		_ = s.listener.Close()
		s.closeFresh()
		err := s.http.Shutdown(ctx)
		if err != nil {
			err = errors.Join(err, s.http.Close())
		}
		<-s.served
		s.cancel()
		if err != nil {
			s.closeErr = fmt.Errorf("closing registry %s: %w", s.Addr(), err)
		}
	})
	return s.closeErr
}

// newApp builds distribution's application. NewApp panics on a bad
// configuration; that becomes an error here.
func newApp(ctx context.Context, cfg Config) (app *handlers.App, err error) {
	dcfg, err := configure(cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			app, err = nil, fmt.Errorf("starting registry: %v", r)
		}
	}()
	return handlers.NewApp(ctx, dcfg), nil
}

func configure(cfg Config) (*configuration.Configuration, error) {
	secret := cfg.UploadSecret
	if secret == nil {
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, fmt.Errorf("registry http secret: %w", err)
		}
	}
	storage := configuration.Storage{
		"delete":      {"enabled": true},
		"redirect":    {"disable": true},
		"cache":       {"blobdescriptor": "inmemory"},
		"maintenance": {"uploadpurging": map[any]any{"enabled": false}},
	}
	if cfg.Dir == "" {
		storage["inmemory"] = configuration.Parameters{}
	} else {
		storage["filesystem"] = configuration.Parameters{"rootdirectory": cfg.Dir}
	}
	dcfg := &configuration.Configuration{Storage: storage}
	if cfg.Dir != "" {
		registerDirectBlobs()
		dcfg.Middleware = map[string][]configuration.Middleware{
			"repository": {{Name: directBlobsName, Options: configuration.Parameters{directBlobsRoot: cfg.Dir}}},
		}
	}
	dcfg.HTTP.Secret = hex.EncodeToString(secret)
	dcfg.Log.AccessLog.Disabled = true
	dcfg.Log.Level = "error"
	if cfg.Auth != nil {
		registerController()
		dcfg.Auth = configuration.Auth{controllerName: {controllerOption: cfg.Auth}}
	}
	return dcfg, nil
}

var silenceOnce sync.Once

// silenceLogging mutes logrus's standard logger, which distribution logs
// through (requests, errors, authorization failures): the registry must
// never log a credential, and an embedded registry has nothing to say that
// its callers don't already learn from their own answers.
func silenceLogging() {
	silenceOnce.Do(func() {
		logrus.SetOutput(io.Discard)
		logrus.SetLevel(logrus.PanicLevel)
	})
}

// onceCloseListener lets Close close the listener before Shutdown does.
type onceCloseListener struct {
	net.Listener
	once sync.Once
	err  error
}

func (l *onceCloseListener) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}
