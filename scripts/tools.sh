#!/usr/bin/env bash
# Makes sure the tools the runner and the tests use are there. Today: a
# terraform binary.
#
# The runner (and the tests) look for terraform in this order:
#   1. --terraform / OUTPOST_TERRAFORM
#   2. "terraform" on PATH
#   3. .tools/terraform/1.5.7/terraform in the working directory or one of its
#      parents (so the repository's copy is found from any package's tests)
# When none of them has one, this script builds terraform v1.5.7 from source
# through the Go module proxy into .tools/terraform/1.5.7/ (a few minutes, once:
# the directory is named by version, so it is the cache). Nothing is downloaded
# when a terraform is found.
set -euo pipefail

version=1.5.7
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.tools/terraform/$version"

if [ -n "${OUTPOST_TERRAFORM:-}" ]; then
  if [ ! -x "$OUTPOST_TERRAFORM" ] || [ -d "$OUTPOST_TERRAFORM" ]; then
    echo "tools: OUTPOST_TERRAFORM=$OUTPOST_TERRAFORM is not an executable file" >&2
    exit 1
  fi
  exit 0
fi
if command -v terraform >/dev/null 2>&1; then
  exit 0
fi
if [ -x "$dir/terraform" ]; then
  exit 0
fi

echo "tools: no terraform found: building terraform v$version from the Go module proxy into $dir (a few minutes, once)" >&2
start=$(date +%s)
tmp="$dir.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# -mod=mod (which this repository's GOFLAGS may hold) is refused by
# "go install pkg@version"; a static binary needs no C toolchain.
GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOBIN="$tmp" go install "github.com/hashicorp/terraform@v$version"
mkdir -p "$dir"
# A rename, so a half-built binary is never found.
mv -f "$tmp/terraform" "$dir/terraform"
echo "tools: terraform v$version built in $(( $(date +%s) - start ))s: $dir/terraform" >&2
