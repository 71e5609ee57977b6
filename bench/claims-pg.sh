#!/usr/bin/env bash
# Claims per second on Postgres (issue 30, item 6): one list of ROWS rows sent
# by one and by three `wasend campaign run` processes as three hosts
# (WASEND_HOST) on one Postgres, beside one process on SQLite, the same
# work: three numbers with unlimited tiers, to the sandbox (SERVER=minimal:
# bench/minimal). Each figure is messages claimed, sent and recorded per
# second from the hosts' start to the last one's end (the import is before
# it); a claim is one row.
#
#   bench/claims-pg.sh [ROWS] [RUNS]      # 30,000 rows, 1 run
#   DURABLE=1 bench/claims-pg.sh          # the server with fsync, as in production
#   SERVER=minimal bench/claims-pg.sh     # against bench/minimal, not the sandbox
#   LEGS="pg3" bench/claims-pg.sh         # only some legs: sqlite pg1 pg3
#   STATS=20 bench/claims-pg.sh           # and each leg's 20 costliest statements, tables read
#   PGOPTS="-c random_page_cost=1.1" bench/claims-pg.sh   # more server settings
#   ANALYZE=messages bench/claims-pg.sh   # each Postgres leg's tables analyzed after its import
#   WASEND_BIN=/tmp/wasend-old bench/claims-pg.sh          # another build of wasend sends
#
# Postgres is started the way internal/pgtest starts it: Debian's server in a
# temporary directory on a free port, as the postgres user when run as root,
# with fsync, synchronous_commit and full_page_writes off unless DURABLE=1 (a
# production server also waits for its WAL on disk at each commit, one per
# 64 rows here). Legs interleave (sqlite, pg1, pg3, then again) so the drift
# of a shared machine falls on all of them; each line says the load (uptime)
# it was taken at, and with RUNS > 1 the last lines give the median and the
# spread. CPU per message: the hosts' (user + system) and the database
# server's (every process of it). Under each Postgres leg, from
# pg_stat_statements and pg_stat_database: its transactions, claims (a claim
# is one INSERT INTO attempts) and rows per claim, claim locks taken, and
# statements (the foreign keys' checks among them) per row.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-30000}
runs=${2:-1}
legs=${LEGS:-sqlite pg1 pg3}
server=${SERVER:-sandbox}
work=$(mktemp -d)
chmod 755 "$work"
pgpid=
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  if [ -n "$pgpid" ]; then kill -QUIT "$pgpid" 2>/dev/null || true; wait "$pgpid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

pgbin=
if command -v postgres >/dev/null; then pgbin=$(dirname "$(command -v postgres)"); fi
for d in /usr/lib/postgresql/17/bin /usr/lib/postgresql/16/bin /usr/lib/postgresql/15/bin; do
  [ -z "$pgbin" ] && [ -x "$d/postgres" ] && pgbin=$d
done
[ -n "$pgbin" ] || { echo "postgres is not installed (Debian: apt-get install postgresql)" >&2; exit 1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

wasend_bin "$work/wasend"
port=$(freeport)
start_server "$work/wasend" "$work" "$port" "$server"

mkdir "$work/pg"
[ "$(id -u)" = 0 ] && chown postgres "$work/pg"
as_pg "$pgbin/initdb" -D "$work/pg/data" -U wasend --auth=trust -E UTF8 --locale=C --no-sync >"$work/initdb.log"
pgport=$(freeport)
durability=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off)
[ -n "${DURABLE:-}" ] && durability=()
as_pg "$pgbin/postgres" -D "$work/pg/data" -p "$pgport" -k "$work/pg" -c listen_addresses=127.0.0.1 \
  "${durability[@]}" -c max_connections=200 -c log_min_messages=fatal \
  -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all ${PGOPTS:-} 2>"$work/pg.log" &
for _ in $(seq 300); do # until it takes connections
  pg_isready -q -h "$work/pg" -p "$pgport" && break
  sleep 0.1
done
pgpid=$(head -1 "$work/pg/data/postmaster.pid")
# CPU time (clock ticks) of the database server: the postmaster, the
# backends it reaped and those alive.
server_ticks() {
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pm="$pgpid" '
    { pid = $1; sub(/^.*\) /, "") }
    pid == pm { t += $12 + $13 + $14 + $15 }
    $2 == pm { t += $12 + $13 }
    END { print t + 0 }'
}
hz=$(getconf CLK_TCK)

recipients "$rows" "$work/list.csv"
export WASEND_API_BASE="http://127.0.0.1:$port" WASEND_TOKEN=bench

# leg NAME DB HOSTS: a fresh database, the list imported, HOSTS processes
# sending it; prints one line and appends "NAME rate cpu srvcpu" to figures.
leg() {
  local name=$1 db=$2 hosts=$3 i pids=() t0 start end sent
  unlimited "$work/wasend" --db "$db"
  "$work/wasend" -q --db "$db" campaign import "$work/list.csv" --template wasend_demo --lang en_US --params name >/dev/null
  # ANALYZE=TABLES: the statistics autovacuum takes of a table an import
  # filled (messages), taken before the run: none of its rows is in flight.
  if [ -n "${ANALYZE:-}" ] && [ "$name" != sqlite ]; then psql -qAt -d "$db" -c "ANALYZE ${ANALYZE//,/, }"; fi
  t0=$(server_ticks)
  start=$(date +%s.%N)
  for i in $(seq "$hosts"); do
    WASEND_HOST=host-$i /usr/bin/time -o "$work/time-$i" -f '%U %S' \
      "$work/wasend" -q --db "$db" campaign run --resume 1 --log-level error >/dev/null &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  end=$(date +%s.%N)
  local srv=$(($(server_ticks) - t0))
  sent=$("$work/wasend" --db "$db" campaign list --json | grep -o '"sent": [0-9]*' | head -1 | grep -o '[0-9]*$')
  [ "$sent" = "$rows" ] || { echo "$name: $sent of $rows rows sent" >&2; exit 1; }
  local cpu=$(cat "$work"/time-[0-9]* | awk -v n="$sent" '{ s += $1 + $2 } END { print s * 1000000 / n }')
  rm -f "$work"/time-[0-9]*
  local rate=$(echo "$sent / ($end - $start)" | bc -l)
  local srvcpu=0
  [ "$name" != sqlite ] && srvcpu=$(echo "$srv * 1000000 / $hz / $sent" | bc -l)
  printf '%-6s %d rows by %d host(s) in %.2f s: %5.0f claims/s; CPU per message: hosts %.0f µs, Postgres %.0f µs (load %s)\n' \
    "$name" "$sent" "$hosts" "$(echo "$end - $start" | bc -l)" "$rate" "$cpu" "$srvcpu" "$(cut -d' ' -f1 /proc/loadavg)"
  echo "$name $rate $cpu $srvcpu" >>"$work/figures"
}

# pgstats DB: what the leg cost the server in statements: transactions and
# claims per message, rows per claim (a claim is one INSERT INTO attempts),
# and with STATS=1 the statements that took the most time.
pgstats() {
  local q="psql -qAt -h $work/pg -p $pgport -U wasend -d $1"
  $q -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
  $q -F' ' -c "SELECT d.xact_commit, d.xact_rollback,
      (SELECT sum(calls) FROM pg_stat_statements s WHERE s.dbid = d.datid AND s.query LIKE 'INSERT INTO attempts%'),
      (SELECT sum(rows) FROM pg_stat_statements s WHERE s.dbid = d.datid AND s.query LIKE 'INSERT INTO attempts%'),
      (SELECT sum(calls) FROM pg_stat_statements s WHERE s.dbid = d.datid AND s.query LIKE '%pg_advisory_xact_lock%'),
      (SELECT sum(calls) FROM pg_stat_statements s WHERE s.dbid = d.datid)
    FROM pg_stat_database d WHERE d.datname = '$1'" |
    awk '{ printf "       transactions %d (%d rolled back), claims %d of %.1f rows each, claim locks %d, statements %d: %.2f transactions, %.1f statements a row\n", $1, $2, $3, $4 / ($3 ? $3 : 1), $5, $6, $1 / ($4 ? $4 : 1), $6 / ($4 ? $4 : 1) }'
  if [ -n "${STATS:-}" ]; then
    $q -F' | ' -c "SELECT relname, seq_scan, seq_tup_read, idx_scan, idx_tup_fetch, n_tup_ins + n_tup_upd + n_tup_del AS written, autoanalyze_count
      FROM pg_stat_user_tables ORDER BY seq_tup_read + coalesce(idx_tup_fetch, 0) DESC LIMIT 8"
    $q -F' | ' -c "SELECT calls, rows, round(total_exec_time::numeric, 0) AS ms, left(regexp_replace(query, '\s+', ' ', 'g'), 110)
      FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '$1' ORDER BY total_exec_time DESC LIMIT ${STATS}"
  fi
}

: >"$work/figures"
echo "claims/s of $rows rows, 3 unlimited numbers, the $server; Postgres $("$pgbin/postgres" -V | awk '{ print $3 }')$([ -n "${DURABLE:-}" ] && echo ", durable" || echo ", fsync off as pgtest")"
for run in $(seq "$runs"); do
  for l in $legs; do
    case "$l" in
    sqlite) leg sqlite "$work/run-$run.db" 1 ;;
    pg1 | pg3)
      psql -q -h "$work/pg" -p "$pgport" -U wasend -d postgres -c "CREATE DATABASE ${l}_$run"
      leg "$l" "postgres://wasend@/${l}_$run?host=$work/pg&port=$pgport&sslmode=disable" "${l#pg}"
      pgstats "${l}_$run"
      ;;
    *) echo "LEGS: $l is not sqlite, pg1 or pg3" >&2; exit 2 ;;
    esac
  done
  rm -f "$work"/run-*.db*
done
if [ "$runs" -gt 1 ]; then
  stat() { sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf fmt, m, v[1], v[NR] }' fmt="$1"; }
  for l in $legs; do
    printf '%-6s over %d runs (median, lowest-highest): %s claims/s; CPU per message: hosts %s µs, Postgres %s µs\n' "$l" "$runs" \
      "$(awk -v l="$l" '$1 == l { print $2 }' "$work/figures" | stat '%.0f (%.0f-%.0f)')" \
      "$(awk -v l="$l" '$1 == l { print $3 }' "$work/figures" | stat '%.0f (%.0f-%.0f)')" \
      "$(awk -v l="$l" '$1 == l { print $4 }' "$work/figures" | stat '%.0f (%.0f-%.0f)')"
  done
fi
echo "command: $([ -n "${DURABLE:-}" ] && echo 'DURABLE=1 ')$([ -n "${ANALYZE:-}" ] && echo "ANALYZE=$ANALYZE ")SERVER=$server bench/claims-pg.sh $rows $runs"
