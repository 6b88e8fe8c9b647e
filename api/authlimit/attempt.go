package authlimit

import (
	"net/http"
	"strconv"
	"time"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/protocol"
)

// Attempt is one authentication being tried.
type Attempt struct {
	l              *Limiter
	source, prefix string
}

// Begin starts an attempt of token (of the type typePrefix) by r. A wait
// above 0 means the attempt is refused: answer Refuse(wait) without checking
// the token.
func (l *Limiter) Begin(r *http.Request, typePrefix, token string) (Attempt, time.Duration) {
	a := Attempt{l: l, source: l.Source(r), prefix: Prefix(typePrefix, token)}
	return a, l.Wait(a.source, a.prefix)
}

// Failed counts the attempt as a failure.
func (a Attempt) Failed() { a.l.Fail(a.source, a.prefix) }

// Refuse sets Retry-After on h and returns the 429 to answer.
func Refuse(h http.Header, wait time.Duration) *apierr.HTTPError {
	secs := RetryAfter(wait)
	h.Set("Retry-After", strconv.Itoa(secs))
	return apierr.New(http.StatusTooManyRequests, protocol.CodeRateLimited, "",
		"too many failed authentications from this address or with this token; retry in %d s", secs)
}
