#!/bin/sh
# Asks the API just deployed to warm its cache, as a real one would with
# curl -fsS -X POST "$API_URL/admin/cache/warm" (the demo's API is a
# stand-in that serves nothing: this says so), and writes the URL as an output.
set -eu
echo "warming the cache of $API_URL (schema version $SCHEMA_VERSION)"
echo "warmed=$API_URL" >>"$OUTPOST_OUTPUTS"
