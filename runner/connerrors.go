package runner

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/outpost-dev/outpost/protocol"
)

// keptConnErrors is how many failed calls the runner keeps to report.
const keptConnErrors = 5

// clockSkewLimit: a gateway Date further than this from the runner's clock
// is reported (leases and tokens are times).
const clockSkewLimit = time.Minute

// connErrors keeps the runner's latest failed calls to the gateway until a
// runner heartbeat reports them: the runner's own account of why the
// control plane saw it offline.
type connErrors struct {
	mu   sync.Mutex
	list []protocol.ConnectionError
	// skewed: the clock's skew was recorded and has not gone since (one
	// error per episode, not one per call).
	skewed bool
	// counted, when set, counts every failure by kind (metrics.go).
	counted *prometheus.CounterVec
}

func (c *connErrors) add(kind, msg string) {
	if c.counted != nil {
		c.counted.WithLabelValues(kind).Inc()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = append(c.list, protocol.ConnectionError{At: time.Now().UTC(), Kind: kind, Message: msg})
	if len(c.list) > keptConnErrors {
		c.list = c.list[len(c.list)-keptConnErrors:]
	}
}

// take hands the kept errors to a heartbeat; putBack returns them when the
// heartbeat did not get through, before the ones recorded meanwhile.
func (c *connErrors) take() []protocol.ConnectionError {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.list
	c.list = nil
	return l
}

func (c *connErrors) pending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.list) > 0
}

func (c *connErrors) putBack(l []protocol.ConnectionError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = append(l, c.list...)
	if len(c.list) > keptConnErrors {
		c.list = c.list[len(c.list)-keptConnErrors:]
	}
}

// failed records a call's failure, unless it is the protocol's own answer
// (a missing or stale job: 404, 409, 400, with the protocol's error code) or
// the runner is stopping. A 404 without a code is not the gateway's: the
// URL points elsewhere.
func (c *connErrors) failed(ctx context.Context, err error) {
	if ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
		return
	}
	var ge *GatewayError
	if errors.As(err, &ge) {
		switch ge.StatusCode {
		case http.StatusNotFound, http.StatusConflict, http.StatusBadRequest:
			if ge.Body.Code != "" {
				return
			}
		}
	}
	c.add(kindOf(err), err.Error())
}

// kindOf names what kind of failure err is: dns, tls, proxy, http or network.
func kindOf(err error) string {
	var (
		ge      *GatewayError
		pe      *ProxyError
		dns     *net.DNSError
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		record  tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &ge):
		return "http"
	case errors.As(err, &pe), strings.Contains(err.Error(), "proxyconnect"):
		return "proxy"
	case errors.As(err, &dns):
		return "dns"
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid), errors.As(err, &record):
		return "tls"
	default:
		return "network"
	}
}

// checkClock records the gateway's clock when its answer's Date is further
// than clockSkewLimit from the runner's.
func (c *connErrors) checkClock(resp *http.Response) {
	d, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return
	}
	skew := time.Since(d)
	off := skew > clockSkewLimit || skew < -clockSkewLimit
	c.mu.Lock()
	first := off && !c.skewed
	c.skewed = off
	c.mu.Unlock()
	if first {
		c.add("clock", fmt.Sprintf("this machine's clock is %s off the gateway's (its Date: %s); check NTP",
			skew.Round(time.Second), d.UTC().Format(time.RFC3339)))
	}
}
