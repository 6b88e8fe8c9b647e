package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/outpost-dev/outpost/api"
	"github.com/outpost-dev/outpost/api/authlimit"
	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/internal/httpserver"
	"github.com/outpost-dev/outpost/internal/proxied"
	"github.com/outpost-dev/outpost/protocol"
)

// abuseFlags are the limits against abuse: slow clients, token guessing,
// endless streams (docs/architecture/api.md, "Abuse").
type abuseFlags struct {
	http           httpserver.Limits
	authBurst      int
	authEvery      time.Duration
	trustedProxies string
	proxyProtocol  string
	followMax      time.Duration
}

func (a *abuseFlags) register(fs *envflag.FlagSet) {
	d := httpserver.Defaults
	fs.DurationVar(&a.http.ReadHeader, "http-read-header-timeout", d.ReadHeader, "how long a client may take to send a request's headers")
	fs.DurationVar(&a.http.Read, "http-read-timeout", d.Read, "how long a client may take to send a whole request, body included")
	fs.DurationVar(&a.http.Write, "http-write-timeout", d.Write,
		"how long a request may take to be answered, the answer sent: more than -claim-wait (log follow streams: -log-follow-max)")
	fs.DurationVar(&a.http.Idle, "http-idle-timeout", d.Idle, "how long an idle keep-alive connection stays open")
	fs.IntVar(&a.http.MaxHeaderBytes, "http-max-header-bytes", d.MaxHeaderBytes, "the largest request headers accepted (431 beyond)")
	fs.IntVar(&a.authBurst, "auth-failure-burst", authlimit.DefaultBurst,
		"failed authentications a source address, or a token prefix, may have in a row before it is answered 429")
	fs.DurationVar(&a.authEvery, "auth-failure-refill", authlimit.DefaultEvery, "how long until one more failed authentication is allowed")
	fs.StringVar(&a.trustedProxies, "trusted-proxies", "",
		"reverse proxies (CIDRs, comma-separated) whose X-Forwarded-For names the client for the failed-authentication limit (default: none: the peer is the client)")
	fs.StringVar(&a.proxyProtocol, "proxy-protocol-from", "",
		"TCP load balancers (CIDRs, addresses or host names, comma-separated) that open each connection to the API and the gateway "+
			"with a PROXY protocol header naming the client; from any other peer no header is believed (default: none)")
	fs.DurationVar(&a.followMax, "log-follow-max", api.DefaultFollowMax, "how long one log follow stream lasts before it ends with a resume event")
}

// check refuses limits that are not set or would cut the gateway's own long
// polls.
func (a *abuseFlags) check(iv protocol.Intervals) error {
	longest := max(iv.ClaimWait(), iv.JobHeartbeat()) + 10*time.Second
	if err := a.http.Check(longest); err != nil {
		return fmt.Errorf("-http-*: %w (-claim-wait, -job-heartbeat and 10s to spare)", err)
	}
	if a.authBurst < 1 || a.authEvery <= 0 || a.followMax <= 0 {
		return fmt.Errorf("-auth-failure-burst must be at least 1, -auth-failure-refill and -log-follow-max above 0")
	}
	return nil
}

// proxied is who may send the API and the gateway the PROXY protocol.
func (a *abuseFlags) proxied() (*proxied.Trusted, error) {
	t, err := proxied.Parse(a.proxyProtocol)
	if err != nil {
		return nil, fmt.Errorf("-proxy-protocol-from: %w", err)
	}
	return t, nil
}

// limiter is the failed-authentication limiter the API and the gateway
// share (zero fields: authlimit's defaults).
func (a *abuseFlags) limiter(log *slog.Logger) (*authlimit.Limiter, error) {
	proxies, err := authlimit.ParseCIDRs(a.trustedProxies)
	if err != nil {
		return nil, fmt.Errorf("-trusted-proxies: %w", err)
	}
	return authlimit.New(authlimit.Config{Burst: a.authBurst, Every: a.authEvery, TrustedProxies: proxies, Log: log}), nil
}
