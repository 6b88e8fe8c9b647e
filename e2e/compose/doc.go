// Package compose tests the top-level docker-compose.yml with the images this
// machine makes (scripts/compose.sh): the stack comes up healthy, provisions
// the demo install with its runner in a container, runs a debug command on
// it, keeps the runner's network apart from the control plane, and keeps
// every install across `docker compose down` and `up`. It needs a Docker
// engine (scripts/docker.sh starts one as root) and skips without one.
package compose
