#!/usr/bin/env bash
# Makes sure a PostgreSQL server answers on OUTPOST_TEST_DATABASE_URL's host
# (default 127.0.0.1:5432): the tests create a database each on it. On a
# machine where the server is installed but stopped, it starts it; on one
# without it, it installs Debian's package first.
set -euo pipefail
host=127.0.0.1 port=5432
ready() { pg_isready -q -h "$host" -p "$port" 2>/dev/null; }
if ! command -v pg_isready >/dev/null; then
  echo "ensure-postgres: installing postgresql (Debian package)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
if ready; then exit 0; fi
echo "ensure-postgres: starting the local PostgreSQL cluster" >&2
if command -v pg_ctlcluster >/dev/null && ls /etc/postgresql >/dev/null 2>&1; then
  ver=$(ls /etc/postgresql | sort -V | tail -n1)
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
fi
for _ in $(seq 1 30); do ready && exit 0; sleep 1; done
echo "ensure-postgres: no PostgreSQL on $host:$port (set OUTPOST_TEST_DATABASE_URL to one with trust or password auth)" >&2
exit 1
