package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins/helm"
)

// Component health (docs/architecture/health.md): outpost-runner runs
//
//	outpost-runner-helm health < targets.json
//
// with a JSON array of protocol.HealthTarget on stdin (it holds kubeconfigs,
// so never a file), and reads a JSON array of protocol.ComponentHealth, one
// per target in order, from stdout.

// healthReadTimeout bounds the reading of one component.
const healthReadTimeout = 30 * time.Second

func health(stdin io.Reader, stdout, stderr io.Writer) int {
	var targets []protocol.HealthTarget
	if err := json.NewDecoder(stdin).Decode(&targets); err != nil {
		fmt.Fprintf(stderr, "health: reading the targets on stdin: %v\n", err)
		return 2
	}
	out := make([]protocol.ComponentHealth, len(targets))
	for i, t := range targets {
		ctx, cancel := context.WithTimeout(context.Background(), healthReadTimeout)
		out[i] = helm.ReadHealth(ctx, t)
		cancel()
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		fmt.Fprintf(stderr, "health: %v\n", err)
		return 1
	}
	return 0
}
