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

// Begin starts an attempt of token (of the type typePrefix) by r. The token
// is always checked: a valid one is accepted whatever its source's count.
func (l *Limiter) Begin(r *http.Request, typePrefix, token string) Attempt {
	return Attempt{l: l, source: l.Source(r), prefix: Prefix(typePrefix, token)}
}

// Failed counts the attempt as a failure. It returns the 429 to answer
// (Retry-After set on h) when the source or the prefix was already over its
// limit, nil when the caller answers its usual refusal.
func (a Attempt) Failed(h http.Header) error {
	wait := a.l.Wait(a.source, a.prefix)
	a.l.Fail(a.source, a.prefix)
	if wait > 0 {
		return Refuse(h, wait)
	}
	return nil
}

// Refuse sets Retry-After on h and returns the 429 to answer.
func Refuse(h http.Header, wait time.Duration) *apierr.HTTPError {
	secs := RetryAfter(wait)
	h.Set("Retry-After", strconv.Itoa(secs))
	return apierr.New(http.StatusTooManyRequests, protocol.CodeRateLimited, "",
		"too many failed authentications from this address or with this token; retry in %d s", secs)
}
