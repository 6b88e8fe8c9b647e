package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// healthz is the gateway listener's own health, for a load balancer or a
// readiness probe in front of it: 200 once the database answers, 503 while
// the gateway drains (its process is shutting down: send runners elsewhere)
// or the database does not answer.
func (g *Gateway) healthz(c echo.Context) error {
	g.mu.Lock()
	draining := g.draining
	g.mu.Unlock()
	if draining {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "draining"})
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	defer cancel()
	if err := g.store.Ping(ctx); err != nil {
		g.log.Warn("gateway: health check failed", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}
