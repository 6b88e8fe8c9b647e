package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/outpost-dev/outpost/protocol"
)

// authenticate gives the client a runner token and the runner its intervals:
// it takes the given runner token, or the one in the token file, and checks
// it with a runner heartbeat; with a registration token and no saved runner
// token, it registers. No token is ever logged.
func (r *Runner) authenticate(ctx context.Context) error {
	token := r.cfg.Token
	if !strings.HasPrefix(token, protocol.RunnerTokenPrefix) && r.cfg.TokenFile != "" {
		saved, err := readTokenFile(r.cfg.TokenFile)
		if err != nil {
			return err
		}
		if saved != "" {
			r.log.Info("using the runner token saved in the token file", "token_file", r.cfg.TokenFile)
			token = saved
		}
	}
	switch {
	case strings.HasPrefix(token, protocol.RunnerTokenPrefix):
		r.gw.setToken(token)
		r.checking.Store(true) // the first heartbeat asks (healthcheck.go)
		req := r.heartbeatRequest()
		resp, err := retry(ctx, r.retry, r.log, "connecting to the gateway", func(ctx context.Context) (protocol.RunnerHeartbeatResponse, error) {
			return r.gw.RunnerHeartbeat(ctx, req)
		})
		switch {
		case unauthorized(err):
			return fmt.Errorf("%w: %w", ErrUnauthorized, err)
		case err != nil:
			return fmt.Errorf("connecting to the gateway: %w", err)
		}
		r.setIntervals(resp.Intervals)
		healthCheck{r}.answered(req, resp, true)
		r.health.answered(req, resp)
		return nil
	case strings.HasPrefix(token, protocol.RegistrationTokenPrefix):
		return r.register(ctx, token)
	default:
		return fmt.Errorf("no runner token: the token file %s holds none and no registration token was given", r.cfg.TokenFile)
	}
}

// register exchanges the registration token for a runner token and saves it
// in the token file, if there is one. A registration token is good for one
// registration only, so the runner makes sure it can write the token file
// before it registers.
func (r *Runner) register(ctx context.Context, registrationToken string) error {
	var saveTo *os.File
	if r.cfg.TokenFile != "" {
		dir := filepath.Dir(r.cfg.TokenFile)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("token file %s: %w", r.cfg.TokenFile, err)
		}
		f, err := os.CreateTemp(dir, ".outpost-runner-token-*") // mode 0600
		if err != nil {
			return fmt.Errorf("token file %s: cannot write it: %w", r.cfg.TokenFile, err)
		}
		defer func() {
			f.Close()
			os.Remove(f.Name()) // fails once renamed: nothing left behind
		}()
		saveTo = f
	}

	resp, err := retry(ctx, r.retry, r.log, "registering", func(ctx context.Context) (protocol.RegisterResponse, error) {
		return r.gw.Register(ctx, protocol.RegisterRequest{
			RegistrationToken: registrationToken,
			Name:              r.cfg.Name,
			Version:           Version,
			Platform:          Platform,
			Capabilities:      r.capabilities,
		})
	})
	switch {
	case unauthorized(err) || statusOf(err) == http.StatusForbidden:
		return fmt.Errorf("registering: the registration token was refused (invalid, expired or already used): %w", err)
	case err != nil:
		return fmt.Errorf("registering: %w", err)
	case !strings.HasPrefix(resp.Token, protocol.RunnerTokenPrefix):
		return fmt.Errorf("registering: the gateway answered without a runner token (%s…)", protocol.RunnerTokenPrefix)
	}

	if saveTo != nil {
		if err := saveToken(saveTo, r.cfg.TokenFile, resp.Token); err != nil {
			return fmt.Errorf("registered as runner %s, but could not save its token: %w", resp.RunnerID, err)
		}
	}
	r.gw.setToken(resp.Token)
	r.setIntervals(resp.Intervals)
	r.log.Info("registered", "runner_id", resp.RunnerID, "token_file", r.cfg.TokenFile)
	return nil
}

// readTokenFile returns the runner token in path, or "" when there is no
// such file or it is empty.
func readTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the token file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token != "" && !strings.HasPrefix(token, protocol.RunnerTokenPrefix) {
		return "", fmt.Errorf("token file %s: does not hold a runner token (%s…)", path, protocol.RunnerTokenPrefix)
	}
	return token, nil
}

// saveToken writes token to f, a new file next to path, and renames it to
// path: the token file is never seen half written.
func saveToken(f *os.File, path, token string) error {
	if _, err := f.WriteString(token + "\n"); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
