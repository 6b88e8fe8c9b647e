#!/bin/sh
# Reports a version from the run's input and a secret token made from its key.
set -eu
echo "preparing $TARGET with key $API_KEY"
echo "version=$TARGET-1" >> "$OUTPOST_OUTPUTS"
echo "token=tok-$API_KEY" >> "$OUTPOST_OUTPUTS"
