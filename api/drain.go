package api

import (
	"context"
	"time"
)

// Drain lets go of the requests the API holds open, so that an http.Server
// shutting down (RegisterOnShutdown) is not held by them and their clients
// go on at another replica: a log follow stream ends with a `resume` event
// (the client reconnects after its cursor), a ?wait= answers what holds now.
func (s *Server) Drain() { s.drain() }

// waitContext bounds a ?wait= of wait seconds: it ends then, when the client
// leaves, or when the API drains.
func (s *Server) waitContext(ctx context.Context, wait int) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(wait)*time.Second)
	stop := context.AfterFunc(s.draining, cancel)
	return ctx, func() { stop(); cancel() }
}
