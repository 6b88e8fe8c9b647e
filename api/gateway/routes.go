package gateway

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Body limits of the gateway's routes.
const (
	MaxBodyBytes = 1 << 20 // every route not named below
	// MaxLogsBodyBytes holds a full batch of maximal chunks, with JSON escaping to spare.
	MaxLogsBodyBytes     = 48 << 20
	MaxCompleteBodyBytes = 2 << 20
)

// Auth is how a gateway route authenticates.
type Auth int

const (
	AuthNone   Auth = iota // the body holds a registration token
	AuthRunner             // Authorization: Bearer <runner token>
	AuthState              // basic auth: the job ID and its state credential
)

// Route is one gateway route.
type Route struct {
	Method, Path string
	Auth         Auth
	// MaxBody is the largest body it reads: larger is 413.
	MaxBody int64
	handler echo.HandlerFunc
}

// Routes lists every route of /runner/v1, each with its body limit, and
// GET /healthz (the listener's health, for a load balancer or a readiness
// probe); the state routes are terraform's standard http backend
// (protocol.PathState and protocol.PathLock, see the package doc).
func (g *Gateway) Routes() []Route {
	const post = http.MethodPost
	const state = "/runner/v1/state/:workspace"
	return []Route{
		{http.MethodGet, "/healthz", AuthNone, MaxBodyBytes, g.healthz},
		{post, "/runner/v1/register", AuthNone, MaxBodyBytes, g.register},
		{post, "/runner/v1/heartbeat", AuthRunner, MaxBodyBytes, g.runnerHeartbeat},
		{post, "/runner/v1/jobs/claim", AuthRunner, MaxBodyBytes, g.claim},
		{post, "/runner/v1/jobs/:id/heartbeat", AuthRunner, MaxBodyBytes, g.jobHeartbeat},
		{post, "/runner/v1/jobs/:id/logs", AuthRunner, MaxLogsBodyBytes, g.logs},
		{post, "/runner/v1/jobs/:id/complete", AuthRunner, MaxCompleteBodyBytes, g.complete},
		{post, "/runner/v1/jobs/:id/bundle", AuthRunner, MaxBundleBytes, g.bundle},
		{http.MethodGet, state, AuthState, MaxBodyBytes, g.getState},
		{post, state, AuthState, MaxStateBytes, g.putState},
		{http.MethodDelete, state, AuthState, MaxBodyBytes, g.deleteState},
		{"LOCK", state + "/lock", AuthState, MaxBodyBytes, g.lockState},
		{"UNLOCK", state + "/lock", AuthState, MaxBodyBytes, g.unlockState},
	}
}
