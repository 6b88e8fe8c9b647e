#!/bin/sh
# Entrypoint of build/postgres.Dockerfile: on an empty $PGDATA, initdb with
# $POSTGRES_USER/$POSTGRES_PASSWORD (password auth from any host) and create
# $POSTGRES_DB, as the official image does; then run the command.
set -eu
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ "${1:-}" != postgres ]; then
  exec "$@"
fi
shift
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "postgres-entrypoint: POSTGRES_PASSWORD is not set" >&2
    exit 1
  fi
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  # UTF8 as the official image (a minimal base has no locale: initdb would pick SQL_ASCII).
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$db" != postgres ]; then
    createdb -U "$user" "$db"
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "postgres-entrypoint: initialised $PGDATA (user $user, database $db)" >&2
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
