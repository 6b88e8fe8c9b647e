# A stand-in for the official postgres image, for machines that cannot pull it
# (the compose stack's POSTGRES_IMAGE; scripts/compose.sh builds it on the local
# Debian base). It keeps the official image's contract as far as the stack uses
# it: POSTGRES_PASSWORD, POSTGRES_USER, POSTGRES_DB, PGDATA (default
# /var/lib/postgresql/data), port 5432, pg_isready on PATH.
# Build: docker build -f build/postgres.Dockerfile build
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* /var/lib/postgresql/15 \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
 && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
CMD ["postgres"]
