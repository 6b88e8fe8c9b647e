package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

const (
	// requestTimeout bounds a call the gateway answers at once.
	requestTimeout = 30 * time.Second
	// uploadTimeout bounds the upload of a support bundle (tens of megabytes at most).
	uploadTimeout = 5 * time.Minute
	// holdMargin is added to the time the gateway may hold a long poll.
	holdMargin = 15 * time.Second
)

// ErrUnauthorized is returned by Run when the gateway refuses the runner's
// token (401): it was revoked, or is not a valid token.
var ErrUnauthorized = errors.New("the gateway refused the runner token (revoked or invalid)")

// GatewayError is a 4xx or 5xx answer from the gateway.
type GatewayError struct {
	Path       string
	StatusCode int
	Body       protocol.Error // Message holds the raw body when it was not JSON
}

func (e *GatewayError) Error() string {
	msg := fmt.Sprintf("gateway answered %d to %s", e.StatusCode, e.Path)
	if e.Body.Code != "" {
		msg += ": " + e.Body.Code
	}
	if e.Body.Message != "" {
		msg += ": " + e.Body.Message
	}
	if e.Body.Field != "" {
		msg += " (field " + e.Body.Field + ")"
	}
	return msg
}

func statusOf(err error) int {
	var ge *GatewayError
	if errors.As(err, &ge) {
		return ge.StatusCode
	}
	return 0
}

// attemptGone reports whether err says the job attempt is no longer this
// runner's: a 409 stale_attempt, or the gateway's 404.
func attemptGone(err error) bool {
	var ge *GatewayError
	if !errors.As(err, &ge) {
		return false
	}
	// A 404 without the protocol's code is not the gateway's (permanent).
	return ge.StatusCode == http.StatusNotFound && ge.Body.Code != "" ||
		ge.StatusCode == http.StatusConflict && ge.Body.Code == protocol.CodeStaleAttempt
}

func unauthorized(err error) bool { return statusOf(err) == http.StatusUnauthorized }

// permanent reports whether trying err's call again cannot help: a 4xx answer
// other than 408 and 429. Network errors and 5xx answers are worth a retry,
// and so is a 404 without the protocol's error code: a server that is not
// the gateway answered (an ingress or proxy not routing to it yet).
func permanent(err error) bool {
	var ge *GatewayError
	if errors.As(err, &ge) && ge.StatusCode == http.StatusNotFound && ge.Body.Code == "" {
		return false
	}
	s := statusOf(err)
	return s >= 400 && s < 500 && s != http.StatusRequestTimeout && s != http.StatusTooManyRequests
}

// client calls the gateway. Its methods match the protocol's routes.
type client struct {
	base      string
	http      *http.Client
	userAgent string

	mu    sync.RWMutex
	token string

	// conn keeps the failed calls until a runner heartbeat reports them.
	conn connErrors
}

func newClient(base string, t http.RoundTripper) *client {
	return &client{
		base:      base,
		http:      &http.Client{Transport: t},
		userAgent: fmt.Sprintf("outpost-runner/%s (protocol %s)", Version, protocol.Version),
	}
}

func (c *client) setToken(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token = token
}

func (c *client) Register(ctx context.Context, req protocol.RegisterRequest) (protocol.RegisterResponse, error) {
	var resp protocol.RegisterResponse
	_, err := c.post(ctx, protocol.PathRegister, requestTimeout, req, &resp)
	return resp, err
}

// RunnerHeartbeat also reports the failed calls kept since the last one
// that got through.
func (c *client) RunnerHeartbeat(ctx context.Context, req protocol.RunnerHeartbeatRequest) (protocol.RunnerHeartbeatResponse, error) {
	var resp protocol.RunnerHeartbeatResponse
	req.ConnectionErrors = c.conn.take()
	_, err := c.post(ctx, protocol.PathRunnerHeartbeat, requestTimeout, req, &resp)
	if err != nil {
		c.conn.putBack(req.ConnectionErrors)
	}
	return resp, err
}

// hasConnErrors reports whether failed calls wait for the next heartbeat.
func (c *client) hasConnErrors() bool { return c.conn.pending() }

// Claim long-polls for a job; it returns nil when the poll ended without one.
func (c *client) Claim(ctx context.Context, req protocol.ClaimRequest, wait time.Duration) (*protocol.Job, error) {
	var job protocol.Job
	status, err := c.post(ctx, protocol.PathClaim, wait+holdMargin, req, &job)
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	if job.ID == "" {
		return nil, errors.New("gateway answered a claim with a job without an id")
	}
	return &job, nil
}

func (c *client) JobHeartbeat(ctx context.Context, jobID string, req protocol.JobHeartbeatRequest) (protocol.JobHeartbeatResponse, error) {
	var resp protocol.JobHeartbeatResponse
	hold := time.Duration(req.WaitMS) * time.Millisecond
	_, err := c.post(ctx, jobPath(protocol.PathJobHeartbeat, jobID), hold+holdMargin, req, &resp)
	return resp, err
}

func (c *client) SendLogs(ctx context.Context, jobID string, req protocol.LogsRequest) (protocol.LogsResponse, error) {
	var resp protocol.LogsResponse
	_, err := c.post(ctx, jobPath(protocol.PathJobLogs, jobID), requestTimeout, req, &resp)
	return resp, err
}

func (c *client) Complete(ctx context.Context, jobID string, req protocol.CompleteRequest) error {
	_, err := c.post(ctx, jobPath(protocol.PathJobComplete, jobID), requestTimeout, req, nil)
	return err
}

// UploadBundle sends a support job's archive (the file at path, in the
// job's directory: openJobFile).
func (c *client) UploadBundle(ctx context.Context, jobID string, attempt int, path string) error {
	f, err := openJobFile(path)
	if err != nil {
		return fmt.Errorf("reading the support bundle: %w", err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	route := jobPath(protocol.PathJobBundle, jobID) + "?attempt=" + strconv.Itoa(attempt)
	_, err = c.send(ctx, route, f, "application/gzip", nil)
	return err
}

func jobPath(route, jobID string) string {
	return strings.Replace(route, "{id}", url.PathEscape(jobID), 1)
}

// post sends in as JSON and decodes a 200 answer into out (unless out is
// nil). It returns the answer's status; a 4xx or 5xx is a *GatewayError.
func (c *client) post(ctx context.Context, path string, timeout time.Duration, in, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(in)
	if err != nil {
		return 0, fmt.Errorf("encoding request to %s: %w", path, err)
	}
	return c.send(ctx, path, bytes.NewReader(body), "application/json", out)
}

// send posts body and decodes a 200 answer into out (unless out is nil).
func (c *client) send(ctx context.Context, path string, body io.Reader, contentType string, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, body)
	if err != nil {
		return 0, fmt.Errorf("request to %s: %w", path, err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	c.mu.RLock()
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	c.mu.RUnlock()

	resp, err := c.http.Do(req)
	if err != nil {
		err = fmt.Errorf("calling the gateway: %w", err)
		c.conn.failed(ctx, err)
		return 0, err
	}
	defer resp.Body.Close()
	c.conn.checkClock(resp)
	if resp.StatusCode >= 400 {
		err := readError(path, resp)
		c.conn.failed(ctx, err)
		return resp.StatusCode, err
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("decoding the gateway's answer to %s: %w", path, err)
	}
	return resp.StatusCode, nil
}

// readError turns an error answer into a *GatewayError. The body should be a
// protocol.Error; anything else (a proxy's page) is kept, shortened, as the
// message.
func readError(path string, resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	ge := &GatewayError{Path: path, StatusCode: resp.StatusCode}
	if err := json.Unmarshal(raw, &ge.Body); err != nil || ge.Body.Code == "" && ge.Body.Message == "" {
		ge.Body = protocol.Error{Message: strings.TrimSpace(string(raw))}
		if len(ge.Body.Message) > 200 {
			ge.Body.Message = ge.Body.Message[:200] + "…"
		}
	}
	return ge
}
