#!/usr/bin/env bash
# Brings up the outbox test databases on a Debian machine, idempotently:
# PostgreSQL 15 (wal_level=logical, for the replication-slot tests) and
# MariaDB, each with a password-authenticated test account that may create
# databases. testenv.Postgres and testenv.MariaDB connect with these
# credentials and create one database per test.
set -euo pipefail

need_apt=()
command -v pg_ctlcluster >/dev/null || need_apt+=(postgresql)
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "databases: installing ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# PostgreSQL: the first installed major version's main cluster.
pgver=$(pg_lsclusters -h | awk '$2 == "main" {print $1; exit}')
if [ -z "$pgver" ]; then
  pgver=$(ls /usr/lib/postgresql | sort -n | tail -1)
  pg_createcluster "$pgver" main >/dev/null
fi
conf=/etc/postgresql/$pgver/main/conf.d/queuewatch-tests.conf
want="wal_level = logical
max_replication_slots = 20
max_wal_senders = 20"
restart=no
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$want" ]; then
  printf '%s\n' "$want" >"$conf"
  restart=yes
fi
if ! pg_lsclusters -h | awk -v v="$pgver" '$1 == v && $2 == "main"' | grep -q online; then
  pg_ctlcluster "$pgver" main start
elif [ "$restart" = yes ]; then
  pg_ctlcluster "$pgver" main restart
fi
for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 && break; sleep 1; done
su postgres -c "psql -qAtX" <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'queuewatch') THEN
    CREATE ROLE queuewatch LOGIN CREATEDB REPLICATION PASSWORD 'queuewatch';
  ELSE
    ALTER ROLE queuewatch LOGIN CREATEDB REPLICATION PASSWORD 'queuewatch';
  END IF;
END $$;
SQL
[ "$(su postgres -c "psql -qAtX -c 'SHOW wal_level'")" = logical ]

# MariaDB.
if ! mariadb-admin ping --silent >/dev/null 2>&1; then
  service mariadb start >/dev/null 2>&1 || (mysqld_safe >/dev/null 2>&1 &)
fi
for _ in $(seq 1 60); do mariadb-admin ping --silent >/dev/null 2>&1 && break; sleep 1; done
mariadb <<'SQL'
CREATE USER IF NOT EXISTS 'queuewatch'@'localhost' IDENTIFIED BY 'queuewatch';
CREATE USER IF NOT EXISTS 'queuewatch'@'127.0.0.1' IDENTIFIED BY 'queuewatch';
GRANT ALL PRIVILEGES ON *.* TO 'queuewatch'@'localhost';
GRANT ALL PRIVILEGES ON *.* TO 'queuewatch'@'127.0.0.1';
SQL
echo "databases: postgresql $pgver and mariadb ready"
