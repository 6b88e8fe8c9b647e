#!/usr/bin/env bash
# Runs `duplicates` (issue 31's measure of repeated code) over the files git tracks, in a
# copy that leaves out generated files (a "Code generated ... DO NOT EDIT." line: the
# apiclient, api/wire's docs) and writes each line of a Go import block as `import "x"`:
# duplicates passes import lines over, but does not know Go's grouped form. Line numbers
# stay those of the tree. Arguments go to duplicates, e.g. `--most 40`.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
generated=$(git grep -l -E '^// Code generated .* DO NOT EDIT\.$' -- '*.go' || true)
git ls-files -z --cached --others --exclude-standard \
	| grep -zv -x -F -f <(printf '%s\n' $generated) \
	| while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done \
	| xargs -0 cp --parents -t "$tree"
find "$tree" -name '*.go' -exec sed -i -E '/^import \($/,/^\)$/{/^\t/s/^\t/import /}' {} +
echo "left out as generated: $(echo $generated)"
duplicates --repo "$tree" --seconds 120 "$@" | sed "s#$tree/##g"
