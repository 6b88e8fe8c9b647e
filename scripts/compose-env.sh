# Sourced: the compose stack's image variables for this machine's locally made
# images (scripts/compose.sh images builds them). Set ones are kept.
: "${OUTPOST_VERSION:=dev}"
export OUTPOST_IMAGE=${OUTPOST_IMAGE:-ghcr.io/outpost-dev/outpost:$OUTPOST_VERSION}
export RUNNER_IMAGE=${RUNNER_IMAGE:-ghcr.io/outpost-dev/outpost-runner:$OUTPOST_VERSION}
export DEMO_RUNNER_IMAGE=${DEMO_RUNNER_IMAGE:-outpost-local/demo-runner:$OUTPOST_VERSION}
export POSTGRES_IMAGE=${POSTGRES_IMAGE:-outpost-local/postgres:15}
