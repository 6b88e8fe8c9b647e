package api

import (
	"context"
	"github.com/outpost-dev/outpost/api/wire"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/charts"
	"github.com/outpost-dev/outpost/protocol"
)

const testGatewayURL = "https://gateway.outpost.example"

func withGatewayURL(u string) func(*Config) {
	return func(c *Config) { c.GatewayURL = u }
}

func helmInstallPath(instID string, q url.Values) string {
	p := "/v1/installs/" + instID + "/runner/helm-install"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// missingID is an ID like id that names nothing.
func missingID(id string) string { return id[:strings.Index(id, "_")+1] + "0000000000000000" }

// wantHelmInstall is the answer for in, as charts builds it.
func wantHelmInstall(t *testing.T, in charts.RunnerInstall) wire.RunnerHelmInstall {
	t.Helper()
	args, err := in.Args()
	if err != nil {
		t.Fatal(err)
	}
	line, err := in.Command()
	if err != nil {
		t.Fatal(err)
	}
	return wire.RunnerHelmInstall{Command: line, Args: args, Namespace: in.Namespace, TokenSecret: in.TokenSecret,
		NamespaceCommand: "kubectl create namespace " + in.Namespace,
		SecretCommand:    "kubectl create secret generic " + in.TokenSecret + " --namespace " + in.Namespace + " --from-literal=token=<TOKEN>"}
}

// TestRunnerHelmInstall: the command is charts' for the install's defaults
// or the request's values, points at the configured gateway, and holds no
// token; bad values are refused naming the parameter.
func TestRunnerHelmInstall(t *testing.T) {
	e := newTestEnvWithOps(t, newRecordingOps(), withGatewayURL(testGatewayURL))
	_, inst := e.fixture()
	regToken := inst.Runner.RegistrationToken
	if !strings.HasPrefix(regToken, protocol.RegistrationTokenPrefix) {
		t.Fatalf("registration token %q", regToken)
	}

	// The defaults.
	var got wire.RunnerHelmInstall
	res := e.call("GET", helmInstallPath(inst.ID, nil), nil, 200, &got)
	want := wantHelmInstall(t, charts.RunnerInstall{GatewayURL: testGatewayURL, TokenSecret: "outpost-runner-token",
		Namespace: "outpost-runner", Image: "ghcr.io/outpost-dev/outpost-runner"})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("default answer:\n%+v\nwant\n%+v", got, want)
	}
	for _, part := range []string{"helm install outpost-runner oci://ghcr.io/outpost-dev/charts/outpost-runner --version " + charts.RunnerChartVersion,
		" --namespace outpost-runner --create-namespace", " --set-string gateway.url=" + testGatewayURL,
		" --set-string token.existingSecret=outpost-runner-token", " --set-string image.repository=ghcr.io/outpost-dev/outpost-runner"} {
		if !strings.Contains(got.Command, part) {
			t.Errorf("command %q lacks %q", got.Command, part)
		}
	}
	if strings.Contains(got.Command, "image.tag") {
		t.Errorf("command %q sets a tag: the chart's appVersion is the default", got.Command)
	}
	if got.SecretCommand != "kubectl create secret generic outpost-runner-token --namespace outpost-runner --from-literal=token=<TOKEN>" {
		t.Errorf("secret command %q", got.SecretCommand)
	}
	// No token, of any kind, is in the answer.
	for _, secret := range []string{regToken, e.token, protocol.RegistrationTokenPrefix, protocol.RunnerTokenPrefix} {
		if strings.Contains(string(res.body), secret) {
			t.Errorf("the answer holds %q: %s", secret, res.body)
		}
	}

	// The request's values.
	q := url.Values{"namespace": {"acme-runner"}, "token_secret": {"acme.runner-token"},
		"image":   {"registry.example:5000/outpost/runner:v2.0.1"},
		"chart":   {"oci://registry.example:5000/charts/outpost-runner"},
		"version": {"0.2.0-rc.1"}}
	e.call("GET", helmInstallPath(inst.ID, q), nil, 200, &got)
	want = wantHelmInstall(t, charts.RunnerInstall{GatewayURL: testGatewayURL, TokenSecret: "acme.runner-token",
		Namespace: "acme-runner", Image: "registry.example:5000/outpost/runner:v2.0.1",
		Chart: "oci://registry.example:5000/charts/outpost-runner", Version: "0.2.0-rc.1"})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("custom answer:\n%+v\nwant\n%+v", got, want)
	}
	if got.SecretCommand != "kubectl create secret generic acme.runner-token --namespace acme-runner --from-literal=token=<TOKEN>" ||
		!strings.Contains(got.Command, " --namespace acme-runner --create-namespace") ||
		!strings.Contains(got.Command, " --set-string image.tag=v2.0.1") {
		t.Errorf("custom answer: %+v", got)
	}

	// Bad values: 400 naming the parameter.
	for _, tc := range []struct{ param, value string }{
		{"namespace", "Not_A_Label"},
		{"namespace", "outpost.runner"}, // a subdomain, not a label
		{"namespace", strings.Repeat("n", 64)},
		{"token_secret", "Token Secret"},
		{"token_secret", "-token"},
		{"image", "runner; rm -rf /"},
		{"image", "Runner"},
		{"chart", "--post-renderer=/bin/sh"},
		{"chart", "oci://registry example/chart"},
		{"version", "latest"},
		{"version", "--devel"},
		{"version", "1.2.3; rm -rf /"},
	} {
		res := e.send("GET", helmInstallPath(inst.ID, url.Values{tc.param: {tc.value}}), e.token, nil)
		if res.status != 400 || res.apiError(t).Field != tc.param || res.apiError(t).Code != protocol.CodeInvalid {
			t.Errorf("%s=%q: %s, want 400 on %s", tc.param, tc.value, res, tc.param)
		}
	}

	// Another org's install is like a missing one.
	_, other, err := e.store.CreateOrg(context.Background(), "globex")
	if err != nil {
		t.Fatal(err)
	}
	foreign := e.send("GET", helmInstallPath(inst.ID, nil), other, nil)
	missing := e.send("GET", helmInstallPath(missingID(inst.ID), nil), e.token, nil)
	if foreign.status != 404 || missing.status != 404 || foreign.apiError(t).Code != protocol.CodeNotFound {
		t.Errorf("another org's install: %s; a missing one: %s; want 404", foreign, missing)
	}
	// No token at all: 401.
	if res := e.send("GET", helmInstallPath(inst.ID, nil), "", nil); res.status != 401 {
		t.Errorf("without a token: %s, want 401", res)
	}
}

// TestRunnerHelmInstallImageFromConfig: the API's runner image is the
// default; the request's wins.
func TestRunnerHelmInstallImageFromConfig(t *testing.T) {
	e := newTestEnvWithOps(t, newRecordingOps(), withGatewayURL("http://10.0.0.5:8081"), func(c *Config) {
		c.RunnerImage = "ghcr.io/outpost-dev/outpost-runner@sha256:" + strings.Repeat("ab", 32)
	})
	_, inst := e.fixture()
	var got wire.RunnerHelmInstall
	e.call("GET", helmInstallPath(inst.ID, nil), nil, 200, &got)
	want := wantHelmInstall(t, charts.RunnerInstall{GatewayURL: "http://10.0.0.5:8081", TokenSecret: "outpost-runner-token",
		Namespace: "outpost-runner", Image: "ghcr.io/outpost-dev/outpost-runner@sha256:" + strings.Repeat("ab", 32)})
	if !reflect.DeepEqual(got, want) || !strings.Contains(got.Command, "image.digest=sha256:abab") {
		t.Errorf("answer:\n%+v\nwant\n%+v", got, want)
	}
	e.call("GET", helmInstallPath(inst.ID, url.Values{"image": {"runner:v1"}}), nil, 200, &got)
	if !strings.Contains(got.Command, " --set-string image.repository=runner --set-string image.tag=v1") || strings.Contains(got.Command, "digest") {
		t.Errorf("command with the request's image: %s", got.Command)
	}
}

// TestRunnerHelmInstallNeedsGatewayURL: without a usable public gateway URL
// there is no command (409); a missing install is still 404 and a bad
// parameter still 400.
func TestRunnerHelmInstallNeedsGatewayURL(t *testing.T) {
	for _, tc := range []struct{ name, url, message string }{
		{"not configured", "", "no public gateway URL configured"},
		{"not a URL", "gateway.example:8081", "not usable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnvWithOps(t, newRecordingOps(), withGatewayURL(tc.url))
			_, inst := e.fixture()
			res := e.send("GET", helmInstallPath(inst.ID, nil), e.token, nil)
			if res.status != 409 || res.apiError(t).Code != protocol.CodeConflict || !strings.Contains(res.apiError(t).Message, tc.message) {
				t.Errorf("got %s, want 409 saying %q", res, tc.message)
			}
			if strings.Contains(string(res.body), inst.Runner.RegistrationToken) {
				t.Errorf("the answer holds the registration token: %s", res.body)
			}
			if res := e.send("GET", helmInstallPath(missingID(inst.ID), nil), e.token, nil); res.status != 404 {
				t.Errorf("missing install: %s, want 404", res)
			}
			res = e.send("GET", helmInstallPath(inst.ID, url.Values{"namespace": {"Bad"}}), e.token, nil)
			if res.status != 400 || res.apiError(t).Field != "namespace" {
				t.Errorf("bad namespace: %s, want 400 on namespace", res)
			}
		})
	}
}
