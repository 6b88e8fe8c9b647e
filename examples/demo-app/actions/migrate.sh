#!/bin/sh
# Migrates the schema forward, one version at a time, to $TARGET, and
# writes the version it is at as the output schema_version. Safe to run
# again: a version reached is not migrated twice, and a newer schema stays.
# The demo's database keeps its schema version in a file of its data_dir.
set -eu
case "$TARGET" in
  '' | *[!0-9]*) echo "version must be a whole number, not \"$TARGET\"" >&2; exit 2 ;;
esac
file="$DATA_DIR/schema_version"
mkdir -p "$DATA_DIR"
current=0
if [ -s "$file" ]; then current=$(cat "$file"); fi
case "$current" in
  *[!0-9]*) echo "$file holds \"$current\", not a schema version" >&2; exit 1 ;;
esac
if [ "$current" -ge "$TARGET" ]; then
  echo "schema of $DB_HOST at version $current: nothing to migrate for version $TARGET"
fi
while [ "$current" -lt "$TARGET" ]; do
  current=$((current + 1))
  echo "migrating $DB_HOST to schema version $current"
  echo "$current" >"$file"
done
echo "schema_version=$current" >>"$OUTPOST_OUTPUTS"
