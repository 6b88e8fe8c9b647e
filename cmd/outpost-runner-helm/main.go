// Command outpost-runner-helm runs the runner's helm jobs: outpost-runner
// starts it as "outpost-runner-helm job --dir DIR" for each job of type
// helm, helm_chart (a chart build), docker_image, support (a support bundle)
// or kube_logs (a logs request), as it starts itself for the other types. It is a binary of its own
// because helm's SDK (and the Kubernetes client it brings) costs tens of
// milliseconds of package initialisation at every process start: linked
// into outpost-runner, every job of every type would pay it. Put it next to
// outpost-runner (or on PATH, or name it with --helm-job-bin) to give the
// runner the helm capability.
//
// It also reads and patches the runner's own Deployment for a self-update
// in helm mode (deployment.go).
//
//	outpost-runner-helm job --dir DIR
//	outpost-runner-helm deployment-image --deployment NAMESPACE/NAME [--set IMAGE]
//	outpost-runner-helm offline-deploy ARGS (outpost-runner offline deploy execs it)
//	outpost-runner-helm version
//
// And it runs offline deploys (runner/offline), which render manifests from
// the bundle's app config (appconfig, which outpost-runner must not link).
package main

import (
	"io"
	"os"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner"
	"github.com/outpost-dev/outpost/runner/dockerbuild/engine"
	"github.com/outpost-dev/outpost/runner/offline"
	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/helm"
	"github.com/outpost-dev/outpost/runner/plugins/oci"
	"github.com/outpost-dev/outpost/runner/plugins/support"
)

const usage = `Usage:
  outpost-runner-helm job --dir DIR
      Run the helm job in DIR (internal: outpost-runner starts one per helm job).
  outpost-runner-helm deployment-image --deployment NAMESPACE/NAME [--set IMAGE]
      Print the runner container's image of the Deployment, then set it to IMAGE
      (internal: the runner's self-update in helm mode).
  outpost-runner-helm health < TARGETS.json
      Print the health of each helm release on stdin (internal: component health).
  outpost-runner-helm offline-deploy ARGS
      An offline deploy (internal: "outpost-runner offline deploy" runs it).
  outpost-runner-helm version
      Print the version.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	return runner.Command("outpost-runner-helm", usage, args, stdout, stderr, map[string]func([]string) int{
		"job": func(args []string) int {
			return runner.JobCommand("outpost-runner-helm", args, plugins.Registry{
				protocol.JobTypeHelm:        helm.New,
				protocol.JobTypeHelmChart:   oci.ChartBuilder(chartutil.Save),
				protocol.JobTypeDockerImage: oci.ImageBuilder(engine.Build),
				protocol.JobTypeSupport:     support.New,
				protocol.JobTypeKubeLogs:    support.NewKubeLogs,
			}, stderr)
		},
		"deployment-image": func(args []string) int { return deploymentImage(args, stdout, stderr) },
		"health":           func([]string) int { return health(os.Stdin, stdout, stderr) },
		"offline-deploy":   func(args []string) int { return offline.Command(args, os.Stdin, stdout, stderr) },
	})
}
