#!/bin/sh
set -eu
echo "migrating $DB_HOST to $TARGET"
echo "password=hunter2" >> "$OUTPOST_OUTPUTS"
