package offline

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/outpost-dev/outpost/protocol"
)

// stateServer is terraform's http backend on loopback, over files in a
// state directory (<workspace>.tfstate): the offline counterpart of the
// gateway's state routes, so that the terraform plugin runs unchanged. One
// password, made per deploy, guards it; locks live as long as the deploy.
type stateServer struct {
	dir      string
	password string
	srv      *http.Server
	url      string
	mu       sync.Mutex
	locks    map[string]bool
}

var workspaceName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func startStateServer(dir string) (*stateServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("state backend: %w", err)
	}
	pw := make([]byte, 24)
	_, _ = rand.Read(pw)
	s := &stateServer{dir: dir, password: hex.EncodeToString(pw), locks: map[string]bool{}, url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: s}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *stateServer) close() { _ = s.srv.Close() }

// backend is a workspace's backend, as a manifest names it.
func (s *stateServer) backend(ws string) protocol.TerraformBackend {
	lock := s.url + strings.ReplaceAll(protocol.PathLock, "{workspace}", ws)
	return protocol.TerraformBackend{Address: s.url + strings.ReplaceAll(protocol.PathState, "{workspace}", ws),
		LockAddress: lock, UnlockAddress: lock, Password: s.password}
}

// path is a workspace's state file.
func (s *stateServer) path(ws string) string { return filepath.Join(s.dir, ws+".tfstate") }

func (s *stateServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, pw, _ := r.BasicAuth()
	if subtle.ConstantTimeCompare([]byte(pw), []byte(s.password)) != 1 {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, strings.TrimSuffix(protocol.PathState, "{workspace}"))
	ws, lock := strings.CutSuffix(rest, "/lock")
	if !ok || !workspaceName.MatchString(ws) {
		http.NotFound(w, r)
		return
	}
	if err := s.serve(w, r, ws, lock); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func (s *stateServer) serve(w http.ResponseWriter, r *http.Request, ws string, lock bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case lock && r.Method == "LOCK":
		if s.locks[ws] {
			w.WriteHeader(http.StatusLocked)
			return nil
		}
		s.locks[ws] = true
	case lock && r.Method == "UNLOCK":
		delete(s.locks, ws)
	case r.Method == http.MethodGet:
		b, err := os.ReadFile(s.path(ws))
		if errors.Is(err, os.ErrNotExist) {
			w.WriteHeader(http.StatusNoContent)
			return nil
		} else if err != nil {
			return err
		}
		_, _ = w.Write(b)
	case r.Method == http.MethodPost:
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		return writeFileAtomic(s.path(ws), b)
	case r.Method == http.MethodDelete:
		if err := os.Remove(s.path(ws)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
	return nil
}

// writeFileAtomic writes a file whole or not at all.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
