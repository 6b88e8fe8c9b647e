#!/bin/sh
# Warms the cache for the API just deployed (the demo's cache is a stand-in:
# this says what it would do) and writes the URL it warmed as an output.
set -eu
if [ -z "$CACHE" ]; then
  echo "no cache for $API_URL (cache_enabled is false): nothing to warm"
else
  echo "warming $CACHE for $API_URL (schema version $SCHEMA_VERSION)"
fi
echo "warmed=$API_URL" >>"$OUTPOST_OUTPUTS"
