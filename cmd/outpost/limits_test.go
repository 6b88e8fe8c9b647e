package main

import (
	"strings"
	"testing"
)

// The abuse limits' flags: the defaults pass; a write timeout that would cut
// the claim long poll, a zero burst or a bad proxy CIDR are refused, naming
// the flag.
func TestAbuseFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error; "" for none
	}{
		{nil, ""},
		{[]string{"-http-write-timeout", "30s"}, "-http-*"},
		{[]string{"-claim-wait", "5m"}, "-http-*"},
		{[]string{"-http-read-header-timeout", "0"}, "-http-*"},
		{[]string{"-auth-failure-burst", "0"}, "-auth-failure-burst"},
		{[]string{"-trusted-proxies", "10.0.0.0/8,nope"}, "-trusted-proxies"},
		{[]string{"-proxy-protocol-from", "lb,10.0.0.0/33"}, "-proxy-protocol-from"},
	} {
		var gw gatewayFlags
		var a abuseFlags
		fs := newFlagSet("api")
		gw.register(fs)
		a.register(fs)
		if err := parse(fs, tc.args); err != nil {
			t.Fatal(err)
		}
		iv, err := gw.intervals()
		if err != nil {
			t.Fatal(err)
		}
		err = a.check(iv)
		if err == nil {
			_, err = a.limiter(nil)
		}
		if err == nil {
			_, err = a.proxied()
		}
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.want)
		}
	}
}

// -audit-retention defaults to the store's and refuses less than a day, naming the flag.
func TestAuditRetentionFlag(t *testing.T) {
	for args, want := range map[string]string{"": "", "-audit-retention=720h": "", "-audit-retention=1h": "-audit-retention must be at least 24h"} {
		var gw gatewayFlags
		fs := newFlagSet("api")
		gw.register(fs)
		if err := parse(fs, strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		_, err := gw.intervals()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: error %v, want one naming %q", args, err, want)
		}
	}
}
