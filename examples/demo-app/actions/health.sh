#!/bin/sh
# A real check would ask the API: curl -fsS --max-time 5 "$API_URL/healthz".
# The demo's API is a stand-in that serves nothing, so this checks what it
# can without leaving the machine: an https URL and how many replicas run.
set -eu
case "$API_URL" in
  https://?*) ;;
  *) echo "the API's URL \"$API_URL\" is not an https URL"; exit 1 ;;
esac
case "$REPLICAS" in
  '' | *[!0-9]*) echo "the API's replica count \"$REPLICAS\" is not a whole number"; exit 1 ;;
esac
if [ "$REPLICAS" -lt 1 ]; then
  state=unhealthy reason="no API replicas run at $API_URL"
elif [ "$REPLICAS" -lt 2 ]; then
  state=degraded reason="one API replica at $API_URL: no redundancy"
else
  state=healthy reason="$REPLICAS API replicas at $API_URL"
fi
echo "$reason"
printf 'health=%s\nhealth_reason=%s\n' "$state" "$reason" >>"$OUTPOST_OUTPUTS"
# No replica at all fails the check: the upgrade runbook then stops at it.
[ "$state" != unhealthy ] || exit 1
