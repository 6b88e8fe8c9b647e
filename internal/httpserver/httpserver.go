package httpserver

import (
	"errors"
	"net/http"
	"time"
)

// Limits bound what one client may hold of a server.
type Limits struct {
	// ReadHeader: how long a client may take to send a request's headers.
	ReadHeader time.Duration
	// Read: how long it may take to send a whole request, body included
	// (once the body is read, the handler may take longer).
	Read time.Duration
	// Write: how long a request may take to be answered, the answer sent,
	// from the end of its headers: more than the longest long poll. A stream
	// that lasts longer moves its own deadline (http.ResponseController).
	Write time.Duration
	// Idle: how long a keep-alive connection may wait for its next request.
	Idle time.Duration
	// MaxHeaderBytes: the largest request headers (431 beyond).
	MaxHeaderBytes int
}

// Defaults suit the gateway's long polls (its claim waits 25s by default) and
// bodies of up to 64 MiB over a slow link.
var Defaults = Limits{ReadHeader: 10 * time.Second, Read: 2 * time.Minute, Write: 5 * time.Minute,
	Idle: 2 * time.Minute, MaxHeaderBytes: 64 << 10}

// Check refuses limits that are not set, or that would cut a request that
// lasts longest (the longest long poll, with time to spare).
func (l Limits) Check(longest time.Duration) error {
	switch {
	case l.ReadHeader <= 0 || l.Read <= 0 || l.Idle <= 0:
		return errors.New("the read-header, read and idle timeouts must be above 0")
	case l.Write < longest:
		return errors.New("the write timeout must be at least " + longest.String())
	case l.MaxHeaderBytes < 4<<10:
		return errors.New("the header limit must be at least 4096 bytes")
	}
	return nil
}

// New returns a server of h with the limits.
func New(h http.Handler, l Limits) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeader, ReadTimeout: l.Read,
		WriteTimeout: l.Write, IdleTimeout: l.Idle, MaxHeaderBytes: l.MaxHeaderBytes}
}
