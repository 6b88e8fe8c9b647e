package api

import (
	"fmt"
	"io/fs"
	"net/http"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"
	"sigs.k8s.io/yaml"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/charts"
	"github.com/outpost-dev/outpost/protocol"
)

// Defaults of an install's runner `helm install` command.
const (
	// DefaultRunnerNamespace is the namespace the runner is installed into.
	DefaultRunnerNamespace = charts.DefaultRunnerRelease
	// DefaultRunnerTokenSecret is the Secret holding the runner's token.
	DefaultRunnerTokenSecret = charts.DefaultRunnerRelease + "-token"
	// tokenPlaceholder stands for the token in the Secret's command: the API
	// never hands out a token here.
	tokenPlaceholder = "<TOKEN>"
)

// runnerChartValues are the runner chart's defaults that the command relies
// on, read from its values.yaml so they follow the chart.
var runnerChartValues = func() (v struct {
	Image struct {
		Repository string `json:"repository"`
	} `json:"image"`
	Token struct {
		Key string `json:"key"`
	} `json:"token"`
}) {
	b, err := fs.ReadFile(charts.RunnerChart(), "values.yaml")
	if err == nil {
		err = yaml.Unmarshal(b, &v)
	}
	if err != nil || v.Image.Repository == "" || v.Token.Key == "" {
		panic(fmt.Sprintf("api: the %s chart's values.yaml has no image.repository or token.key (%v)", charts.RunnerChartName, err))
	}
	return v
}()

// DefaultRunnerImage is the runner image unless Config.RunnerImage or the
// request says otherwise: the chart's repository, without a tag, so the
// chart's appVersion is the tag.
var DefaultRunnerImage = runnerChartValues.Image.Repository

// runnerTokenKey is the key of the token in the runner's Secret (the chart's
// token.key, which the command leaves at its default).
var runnerTokenKey = runnerChartValues.Token.Key

var runnerHelmInstallQuery = []queryParam{
	{"namespace", "string", "the runner's namespace, a DNS-1123 label (default " + DefaultRunnerNamespace + ")"},
	{"token_secret", "string", "the Secret holding the runner's token, a DNS-1123 subdomain (default " + DefaultRunnerTokenSecret + ")"},
	{"image", "string", "the runner image, repository[:tag][@sha256:digest] (default: the control plane's)"},
	{"chart", "string", "the chart reference (default " + charts.DefaultRunnerChartRef + ")"},
	{"version", "string", "the chart's version, e.g. 1.2.3 (default " + charts.RunnerChartVersion + ")"},
}

const runnerHelmInstallDescription = "The commands that install the install's runner into the customer's cluster with the " +
	"outpost-runner chart, pointed at this control plane's gateway: `namespace_command`, then `secret_command` with `<TOKEN>` " +
	"replaced by the runner's token, then `command` (`args` is the same helm command, one argument each). The token is never " +
	"in the answer: it is the install's one-time registration token, shown only in the answer that created the install " +
	"(POST /v1/runners/{runner id}/registration-token issues a new one), or a runner token. 409 when the control plane " +
	"has no public gateway URL configured."

// sampleRunnerInstall is a valid install: a request's values are checked by
// putting each, alone, into it, so charts' own rules judge them.
var sampleRunnerInstall = charts.RunnerInstall{GatewayURL: "https://gateway.example", TokenSecret: "token",
	Namespace: "namespace", Image: "runner"}

var (
	chartRefPattern     = regexp.MustCompile(`^(?:(?:oci|https?)://)?[A-Za-z0-9./][A-Za-z0-9._~:/@+-]*$`)
	chartVersionPattern = regexp.MustCompile(`^v?[0-9]+(?:\.[0-9]+){0,2}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)
)

const maxRunnerParam = 512

// runnerInstallFromQuery reads the optional query parameters into in; each
// one given must be valid.
func runnerInstallFromQuery(c echo.Context, in *charts.RunnerInstall) error {
	params := []struct {
		name string
		dst  *string
	}{
		{"namespace", &in.Namespace}, {"token_secret", &in.TokenSecret}, {"image", &in.Image},
		{"chart", &in.Chart}, {"version", &in.Version},
	}
	for _, p := range params {
		v := c.QueryParam(p.name)
		if v == "" {
			continue
		}
		if len(v) > maxRunnerParam {
			return apierr.Invalid(p.name, "is longer than %d characters", maxRunnerParam)
		}
		switch p.name {
		case "chart":
			if !chartRefPattern.MatchString(v) {
				return apierr.Invalid(p.name, "%q must be a chart reference: oci://host/path, https://…, repo/name or a path", v)
			}
		case "version":
			if !chartVersionPattern.MatchString(v) {
				return apierr.Invalid(p.name, "%q must be a chart version, e.g. 1.2.3", v)
			}
		default:
			probe := sampleRunnerInstall
			switch p.name {
			case "namespace":
				probe.Namespace = v
			case "token_secret":
				probe.TokenSecret = v
			case "image":
				probe.Image = v
			}
			if _, err := probe.Args(); err != nil {
				return apierr.Invalid(p.name, "%v", err)
			}
		}
		*p.dst = v
	}
	return nil
}

// runnerHelmInstall answers the commands that install an install's runner
// with the runner chart. Nothing secret is in them.
func (s *Server) runnerHelmInstall(c echo.Context) error {
	ctx, org := c.Request().Context(), orgID(c)
	if _, err := s.store.GetInstall(ctx, org, c.Param("id")); err != nil {
		return err
	}
	in := charts.RunnerInstall{Namespace: DefaultRunnerNamespace, TokenSecret: DefaultRunnerTokenSecret, Image: s.runnerImage}
	if err := runnerInstallFromQuery(c, &in); err != nil {
		return err
	}
	if s.gatewayURL == "" {
		return apierr.New(http.StatusConflict, protocol.CodeConflict, "",
			"the control plane has no public gateway URL configured (outpost api -gateway-url, env OUTPOST_GATEWAY_URL): "+
				"there is nothing to point the runner at")
	}
	in.GatewayURL = s.gatewayURL
	args, err := in.Args()
	if err != nil {
		// The request's values were checked: the server's own are wrong.
		he := apierr.New(http.StatusConflict, protocol.CodeConflict, "",
			"the control plane's runner configuration is not usable (its public gateway URL or runner image): %v", err)
		return fmt.Errorf("%w: %w", he, err)
	}
	line, err := in.Command()
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.RunnerHelmInstall{
		Command:          line,
		Args:             args,
		Namespace:        in.Namespace,
		TokenSecret:      in.TokenSecret,
		NamespaceCommand: "kubectl create namespace " + in.Namespace,
		SecretCommand: strings.Join([]string{"kubectl create secret generic", in.TokenSecret, "--namespace", in.Namespace,
			"--from-literal=" + runnerTokenKey + "=" + tokenPlaceholder}, " "),
	})
}
