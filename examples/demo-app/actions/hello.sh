#!/bin/sh
# Writes a greeting to the log and to the run's outputs.
set -eu
greeting="hello, $GREETING_NAME, from $REGION"
echo "$greeting (the API is at $API_URL)"
echo "greeting=$greeting" >> "$OUTPOST_OUTPUTS"
